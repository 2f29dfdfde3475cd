package io.payonce.broker;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Address;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import javax.net.ssl.SSLContext;
import java.io.IOException;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * Publishes to RabbitMQ and tells the caller how many of its messages, from the first on, the
 * broker confirmed; nothing is sent again behind the caller's back. The caller, which knows what a
 * message means (an outbox row, a command's reply), decides whether and when to send the rest again.
 *
 * <p>The messaging connector's emitters are not used for this: their publisher keeps unconfirmed
 * messages in a queue of its own across reconnects, so after a connection loss a publish could wait
 * for a confirm that never came and hold every later one behind it, and an old message could leave
 * long after its caller had given up on it.
 *
 * <p>Calls run on a worker thread (the client's calls block), each on a confirm-mode channel of
 * its own, taken from a small pool on one shared connection. Every wait is bounded by
 * {@link #TIMEOUT}: connecting, the channel's calls, the confirms. A channel that failed is aborted,
 * never reused; the connection is dropped only when it is the one that closed, and the next call opens
 * a new one. While the broker blocks publishers (a memory or disk alarm), calls fail at once instead
 * of waiting for confirms that cannot come.
 *
 * <p>It logs in with the connector's global settings: {@code rabbitmq-addresses} or else {@code rabbitmq-host} and {@code -port},
 * {@code -username}, {@code -password}, {@code -virtual-host} and {@code -ssl} (the JVM's trust store,
 * host name verified), with the client library the connector itself runs on.
 */
@ApplicationScoped
public class ConfirmedPublisher {

    /** Longer than this to connect, for a channel's call, or for a call's confirms, is a broker in trouble. */
    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    /** AMQP delivery mode 2: the broker writes the message to disk in a durable queue. */
    public static final int PERSISTENT = 2;
    /** A connection that has said nothing for this long is dead (a broker gone without a word); as the consumers'. */
    private static final int HEARTBEAT_SECONDS = 5;

    private final Vertx vertx;
    private final ConnectionFactory factory = new ConnectionFactory();
    private final Queue<ConfirmingChannel> idle = new ConcurrentLinkedQueue<>();
    private final BrokerReachability reachability;
    /** The broker's nodes, tried in order on every connection: the next one answers when a node is gone. */
    private final List<Address> addresses;
    private Connection connection;
    private volatile String blockedBecause;
    private boolean closed;

    ConfirmedPublisher(Vertx vertx,
                       @ConfigProperty(name = "rabbitmq-host") String host,
                       @ConfigProperty(name = "rabbitmq-port") int port,
                       @ConfigProperty(name = "rabbitmq-username") String username,
                       @ConfigProperty(name = "rabbitmq-password") String password,
                       @ConfigProperty(name = "rabbitmq-virtual-host", defaultValue = "/") String virtualHost,
                       @ConfigProperty(name = "rabbitmq-ssl", defaultValue = "false") boolean ssl,
                       @ConfigProperty(name = "rabbitmq-addresses") Optional<String> cluster) throws NoSuchAlgorithmException {
        this.vertx = vertx;
        this.addresses = cluster.map(Address::parseAddresses).map(List::of).orElseGet(() -> List.of(new Address(host, port)));
        this.reachability = new BrokerReachability(addresses.stream().map(Address::toString).collect(Collectors.joining(",")), username,
                cluster.isPresent() ? "PAYONCE_RABBITMQ_ADDRESSES" : "PAYONCE_RABBITMQ_HOST and PAYONCE_RABBITMQ_PORT");
        factory.setHost(host);
        factory.setPort(port);
        factory.setUsername(username);
        factory.setPassword(password);
        factory.setVirtualHost(virtualHost);
        if (ssl) {
            factory.useSslProtocol(SSLContext.getDefault());
            factory.enableHostnameVerification();
        }
        factory.setConnectionTimeout((int) TIMEOUT.toMillis());
        factory.setHandshakeTimeout((int) TIMEOUT.toMillis());
        factory.setChannelRpcTimeout((int) TIMEOUT.toMillis());
        factory.setRequestedHeartbeat(HEARTBEAT_SECONDS);
        factory.setAutomaticRecoveryEnabled(false);
        factory.setTopologyRecoveryEnabled(false);
    }

    /** A message to publish: to {@code exchange} ("" is the default exchange, which routes to the queue named by the key). */
    public record Outgoing(String exchange, String routingKey, AMQP.BasicProperties properties, byte[] body) {
    }

    /** Opens the connection if there is none, so that a caller can connect before it holds anything that must not wait. */
    public Uni<Void> connect() {
        return vertx.executeBlocking(() -> {
            try {
                connection();
                return null;
            } catch (IOException | TimeoutException e) {
                throw new NotConfirmed("RabbitMQ unreachable", e);
            }
        }, false);
    }

    /** Publishes one message; the item comes once the broker has confirmed it. */
    public Uni<Void> publish(Outgoing message) {
        return publish(null, List.of(message)).invoke(ConfirmedPublisher::requireAll).replaceWithVoid();
    }

    /**
     * Publishes {@code messages} in order, to the durable topic exchange {@code ownExchange} (declared
     * first: this service owns it) or to the exchanges they name; the item is how many of them, from
     * the first on, the broker confirmed within the timeout, and whether it refused one after those. A
     * failure means none was confirmed and none refused: the broker is away, did not answer in time,
     * or nacked the first (it refuses for now, a full queue, say: no refusal of the message).
     */
    public Uni<Confirmed> publish(String ownExchange, List<Outgoing> messages) {
        return vertx.executeBlocking(() -> publishAndConfirm(ownExchange, messages), false);
    }

    /**
     * Publishes {@code messages}, each on its own account, in one call: the item says, message by
     * message, whether the broker confirmed it within the timeout. A failure means none was confirmed:
     * the broker is away, or did not answer in time.
     */
    public Uni<List<Boolean>> publishEach(List<Outgoing> messages) {
        return vertx.executeBlocking(() -> publishAndConfirmEach(messages), false);
    }

    /**
     * How many of a call's messages, from the first on, were confirmed, of how many; and, if the
     * broker refused one of the rest, its reason: the broker closed the channel on the first unconfirmed
     * one or one behind it. Null when the rest were merely not confirmed: not in time, or nacked.
     */
    public record Confirmed(int count, int of, String refusal) {

        /** Whether the broker refused a message of the call, rather than not answering in time. */
        public boolean refused() {
            return refusal != null;
        }
    }

    private Confirmed publishAndConfirm(String ownExchange, List<Outgoing> messages) throws InterruptedException {
        return onChannel(ownExchange, channel -> channel.publishAll(messages, TIMEOUT),
                confirmed -> confirmed.count() == messages.size(), confirmed -> confirmed.count() == 0 && !confirmed.refused());
    }

    private List<Boolean> publishAndConfirmEach(List<Outgoing> messages) throws InterruptedException {
        return onChannel(null, channel -> channel.publishEach(messages, TIMEOUT), confirmed -> !confirmed.contains(false),
                confirmed -> !confirmed.contains(true));
    }

    /** A call on a confirm-mode channel, whose result says what the broker confirmed. */
    private interface ChannelCall<T> {
        T on(ConfirmingChannel channel) throws IOException, InterruptedException;
    }

    /**
     * {@code call} on a pooled channel of the connection, or a new one, after declaring {@code ownExchange}
     * if it is named. A channel goes back to the pool only when {@code everyConfirmed} says so: one with a
     * message left unconfirmed could still deliver its late confirm to the next caller. A call of which
     * {@code noneConfirmed} says nothing was confirmed, nor refused, fails, as one the broker did not answer.
     */
    private <T> T onChannel(String ownExchange, ChannelCall<T> call, Predicate<T> everyConfirmed, Predicate<T> noneConfirmed)
            throws InterruptedException {
        if (blockedBecause != null) {
            throw new NotConfirmed("the broker blocks publishers: " + blockedBecause, null);
        }
        Connection current = null;
        ConfirmingChannel channel = null;
        try {
            current = connection();
            channel = ConfirmingChannel.on(idle.poll(), current);
            if (ownExchange != null) {
                channel.channel().exchangeDeclare(ownExchange, "topic", true);
            }
            T confirmed = call.on(channel);
            if (everyConfirmed.test(confirmed)) {
                idle.add(channel);
            } else {
                channel.abort();
            }
            if (noneConfirmed.test(confirmed)) {
                // Its node may have stopped answering (a frozen VM, a partition): the next call connects again, to the
                // next address if that node is gone, rather than wait for the heartbeats to give up on it.
                drop(current);
                throw notConfirmedInTime();
            }
            return confirmed;
        } catch (IOException | TimeoutException | RuntimeException e) {
            if (channel != null) {
                channel.abort();
            }
            forgetIfClosed(current);
            throw e instanceof NotConfirmed notConfirmed ? notConfirmed : new NotConfirmed("not confirmed by RabbitMQ", e);
        }
    }

    private static void requireAll(Confirmed confirmed) {
        if (confirmed.refused()) {
            throw new NotConfirmed("refused by RabbitMQ: " + confirmed.refusal(), null);
        }
        if (confirmed.count() < confirmed.of()) {
            throw notConfirmedInTime();
        }
    }

    private static NotConfirmed notConfirmedInTime() {
        return new NotConfirmed("not confirmed by RabbitMQ within " + TIMEOUT.toMillis() + " ms, or nacked", null);
    }

    private synchronized Connection connection() throws IOException, TimeoutException {
        if (closed) {
            throw new NotConfirmed("payonce is shutting down", null);
        }
        if (connection == null || !connection.isOpen()) {
            idle.clear();
            connection = newConnection();
            connection.addBlockedListener(reason -> blockedBecause = reason, () -> blockedBecause = null);
            blockedBecause = null;
        }
        return connection;
    }

    private Connection newConnection() throws IOException, TimeoutException {
        try {
            Connection opened = factory.newConnection(addresses, "payonce-publisher");
            reachability.reached();
            return opened;
        } catch (IOException | TimeoutException e) {
            reachability.failed(e);
            throw e;
        }
    }

    /** {@code failed} is dropped if it is still the connection: another caller may already use its successor. */
    private synchronized void drop(Connection failed) {
        if (failed == connection) {
            connection = null;
            idle.clear();
            failed.abort((int) TIMEOUT.toMillis());
        }
    }

    /** A connection that closed is dropped, and only that one: another caller may already use its successor. */
    private synchronized void forgetIfClosed(Connection failed) {
        if (failed != null && failed == connection && !failed.isOpen()) {
            connection = null;
            idle.clear();
        }
    }

    /** The broker did not confirm a call's messages: some may have arrived, none is known to have. */
    public static final class NotConfirmed extends RuntimeException {
        NotConfirmed(String message, Throwable cause) {
            super(cause == null ? message : message + ": " + rootOf(cause), cause);
        }

        static Throwable rootOf(Throwable failure) {
            Throwable root = failure;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            return root;
        }
    }

    @PreDestroy
    synchronized void close() {
        closed = true;
        if (connection != null) {
            connection.abort((int) TIMEOUT.toMillis());
            connection = null;
        }
    }
}
