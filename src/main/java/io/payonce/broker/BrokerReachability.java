package io.payonce.broker;

import com.rabbitmq.client.AuthenticationFailureException;
import org.jboss.logging.Logger;

import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Says so when payonce cannot connect to RabbitMQ, and when it can again, once each time. The
 * publisher tries on every outbox relay run (every second) while the broker is away, and the command
 * consumer's connections every {@code rabbitmq-reconnect-interval}; the client library's own lines
 * about each try are dropped from the console ({@code io.payonce.config.LibraryNoise}), so that a
 * broker away for a minute is one warning naming its address and the settings to check, not a
 * hundred stack traces. A different cause is told again: a broker that comes back refusing the login
 * is news. The consumer's connections are told back by the connector (SRMSG17000, a receiver listening),
 * each as it reconnects.
 */
public final class BrokerReachability {

    private static final Logger LOG = Logger.getLogger(BrokerReachability.class);
    private static final String REACHED = "";
    /** Causes that say the broker's address cannot be reached. */
    private static final List<Class<? extends Exception>> UNREACHABLE = List.of(ConnectException.class, NoRouteToHostException.class,
            UnknownHostException.class, SocketTimeoutException.class, TimeoutException.class);

    private final String address;
    private final String user;
    /** The variables that name the address: the list of a cluster's nodes, or the one host and port. */
    private final String addressVariables;
    /** What was told last: {@link #REACHED}, or the warning; null before the first connection. */
    private final AtomicReference<String> told = new AtomicReference<>();

    BrokerReachability(String address, String user, String addressVariables) {
        this.address = address;
        this.user = user;
        this.addressVariables = addressVariables;
    }

    void reached() {
        String before = told.getAndSet(REACHED);
        if (before != null && !before.equals(REACHED)) {
            LOG.infof("RabbitMQ at %s takes payonce's connection again: events leave the outbox", address);
        }
    }

    void failed(Exception failure) {
        String warning = warning(failure);
        if (!warning.equals(told.getAndSet(warning))) {
            LOG.warn(warning);
        }
    }

    /**
     * Whether a failure to connect is one this class tells, once, naming the settings to check: the
     * address cannot be reached, or the login is refused. Every connection to the same address with
     * the same login meets the same.
     */
    public static boolean toldOnce(Throwable failure) {
        return causedBy(failure, UNREACHABLE) || causedBy(failure, List.of(AuthenticationFailureException.class));
    }

    private String warning(Exception failure) {
        String waiting = ": events wait in the outbox, and no command is taken, until it ";
        if (causedBy(failure, List.of(AuthenticationFailureException.class))) {
            return "RabbitMQ at " + address + " refused the login of user " + user + waiting + "takes it; "
                    + "check PAYONCE_RABBITMQ_USER and PAYONCE_RABBITMQ_PASSWORD";
        }
        if (causedBy(failure, UNREACHABLE)) {
            return "RabbitMQ at " + address + " cannot be reached (" + rootCause(failure) + ")" + waiting + "can; "
                    + "check " + addressVariables;
        }
        return "RabbitMQ at " + address + " did not take payonce's connection (" + rootCause(failure) + ")" + waiting + "does; "
                + "check " + addressVariables + ", RABBITMQ_VIRTUAL_HOST and RABBITMQ_SSL";
    }

    private static boolean causedBy(Throwable failure, List<Class<? extends Exception>> kinds) {
        for (Throwable cause = failure; cause != null; cause = cause.getCause() == cause ? null : cause.getCause()) {
            Throwable each = cause;
            if (kinds.stream().anyMatch(kind -> kind.isInstance(each))) {
                return true;
            }
        }
        return false;
    }

    private static String rootCause(Throwable failure) {
        Throwable root = ConfirmedPublisher.NotConfirmed.rootOf(failure);
        return root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    }
}
