package io.payonce.broker;

import com.rabbitmq.client.AuthenticationFailureException;
import org.jboss.logging.Logger;

import java.util.concurrent.atomic.AtomicReference;

/**
 * Says so when payonce cannot connect to RabbitMQ, and when it can again, once each time. The
 * publisher tries on every outbox relay run (every second) while the broker is away, and the command
 * consumer's connections every {@code rabbitmq-reconnect-interval}; the client library's own lines
 * about each try are dropped from the console ({@code io.payonce.config.LibraryNoise}), so that a
 * broker away for a minute is one warning naming its address and the settings to check, not a
 * hundred stack traces. A different cause is told again: a broker that comes back refusing the login
 * is news.
 */
final class BrokerReachability {

    private static final Logger LOG = Logger.getLogger(BrokerReachability.class);
    private static final String REACHED = "";

    private final String address;
    private final String user;
    /** What was told last: {@link #REACHED}, or the warning; null before the first connection. */
    private final AtomicReference<String> told = new AtomicReference<>();

    BrokerReachability(String address, String user) {
        this.address = address;
        this.user = user;
    }

    void reached() {
        String before = told.getAndSet(REACHED);
        if (before != null && !before.equals(REACHED)) {
            LOG.infof("RabbitMQ at %s takes payonce's connection again: events leave the outbox and commands are taken", address);
        }
    }

    void failed(Exception failure) {
        String warning = warning(failure);
        if (!warning.equals(told.getAndSet(warning))) {
            LOG.warn(warning);
        }
    }

    private String warning(Exception failure) {
        if (failure instanceof AuthenticationFailureException) {
            return "RabbitMQ at " + address + " refused the login of user " + user + ": events wait in the outbox, and no command is taken, "
                    + "until it takes it; check PAYONCE_RABBITMQ_USER and PAYONCE_RABBITMQ_PASSWORD";
        }
        return "RabbitMQ at " + address + " cannot be reached (" + rootCause(failure) + "): events wait in the outbox, and no command is taken, "
                + "until it can; check PAYONCE_RABBITMQ_HOST and PAYONCE_RABBITMQ_PORT";
    }

    private static String rootCause(Throwable failure) {
        Throwable root = ConfirmedPublisher.NotConfirmed.rootOf(failure);
        return root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
    }
}
