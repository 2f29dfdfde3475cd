package io.payonce.broker;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.core.Vertx;
import jakarta.annotation.PreDestroy;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeoutException;

/**
 * Publishes to RabbitMQ and succeeds only once the broker has confirmed every message of the call;
 * otherwise it fails, and nothing is sent again behind the caller's back. The caller, which knows
 * what a message means (an outbox row, a command's reply), decides whether and when to send it again.
 *
 * <p>The messaging connector's emitters are not used for this: their publisher keeps unconfirmed
 * messages in a queue of its own across reconnects, so after a connection loss a publish could wait
 * for a confirm that never came and hold every later one behind it, and an old message could leave
 * long after its caller had given up on it.
 *
 * <p>Each call takes a fresh confirm-mode channel on one shared connection, publishes, waits for the
 * confirms, and closes the channel, on a worker thread (the client's calls block). Any failure closes
 * the connection; the next call opens a new one, so a broker that went away is found again without a
 * reconnect loop that could stall. It logs in with the connector's settings ({@code rabbitmq-host},
 * {@code -port}, {@code -username}, {@code -password}, {@code -virtual-host}), and with the client
 * library the connector itself runs on.
 */
@ApplicationScoped
public class ConfirmedPublisher {

    /** Longer than this to connect, or to have a call's messages confirmed, is a broker in trouble. */
    private static final Duration TIMEOUT = Duration.ofSeconds(2);

    private final Vertx vertx;
    private final ConnectionFactory factory = new ConnectionFactory();
    private final Set<String> topicExchanges = ConcurrentHashMap.newKeySet();
    private Connection connection;

    ConfirmedPublisher(Vertx vertx,
                       @ConfigProperty(name = "rabbitmq-host") String host,
                       @ConfigProperty(name = "rabbitmq-port") int port,
                       @ConfigProperty(name = "rabbitmq-username") String username,
                       @ConfigProperty(name = "rabbitmq-password") String password,
                       @ConfigProperty(name = "rabbitmq-virtual-host", defaultValue = "/") String virtualHost) {
        this.vertx = vertx;
        factory.setHost(host);
        factory.setPort(port);
        factory.setUsername(username);
        factory.setPassword(password);
        factory.setVirtualHost(virtualHost);
        factory.setConnectionTimeout((int) TIMEOUT.toMillis());
        factory.setHandshakeTimeout((int) TIMEOUT.toMillis());
        factory.setAutomaticRecoveryEnabled(false);
        factory.setTopologyRecoveryEnabled(false);
    }

    /** A message to publish: to {@code exchange} ("" is the default exchange, which routes to the queue named by the key). */
    public record Outgoing(String exchange, String routingKey, AMQP.BasicProperties properties, byte[] body) {
    }

    /** A durable topic exchange this service owns: declared on every connection, before anything is published. */
    public void ownTopicExchange(String name) {
        topicExchanges.add(name);
    }

    /** Publishes {@code messages} in order; the item comes once the broker has confirmed them all. */
    public Uni<Void> publish(List<Outgoing> messages) {
        return vertx.executeBlocking(() -> {
            publishAndConfirm(messages);
            return null;
        }, false);
    }

    private void publishAndConfirm(List<Outgoing> messages) throws InterruptedException {
        try (Channel channel = connection().createChannel()) {
            channel.confirmSelect();
            for (Outgoing message : messages) {
                channel.basicPublish(message.exchange(), message.routingKey(), message.properties(), message.body());
            }
            channel.waitForConfirmsOrDie(TIMEOUT.toMillis());
        } catch (IOException | TimeoutException | RuntimeException e) {
            closeConnection();
            throw new NotConfirmed(e);
        }
    }

    private synchronized Connection connection() throws IOException, TimeoutException {
        if (connection == null || !connection.isOpen()) {
            Connection opened = factory.newConnection("payonce-publisher");
            try (Channel channel = opened.createChannel()) {
                for (String exchange : topicExchanges) {
                    channel.exchangeDeclare(exchange, "topic", true);
                }
            } catch (IOException | TimeoutException | RuntimeException e) {
                opened.abort();
                throw e;
            }
            connection = opened;
        }
        return connection;
    }

    /** The broker did not confirm a call's messages: some may have arrived, none is known to have. */
    public static final class NotConfirmed extends RuntimeException {
        NotConfirmed(Throwable cause) {
            super("not confirmed by RabbitMQ: " + rootOf(cause), cause);
        }

        private static Throwable rootOf(Throwable failure) {
            Throwable root = failure;
            while (root.getCause() != null && root.getCause() != root) {
                root = root.getCause();
            }
            return root;
        }
    }

    @PreDestroy
    synchronized void closeConnection() {
        if (connection != null) {
            connection.abort((int) TIMEOUT.toMillis());
            connection = null;
        }
    }
}
