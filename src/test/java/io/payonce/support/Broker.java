package io.payonce.support;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import com.rabbitmq.client.GetResponse;
import com.rabbitmq.client.ShutdownSignalException;
import io.payonce.idempotency.Answer;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeoutException;
import java.util.function.Predicate;

/** The RabbitMQ the tests talk to (PAYONCE_RABBITMQ_HOST and _PORT, loopback by default), through the plain Java client. */
public final class Broker implements AutoCloseable {

    /** This build's names, which the build makes unique (pom.xml), as payonce reads them. */
    public static final String EVENTS = System.getenv().getOrDefault("PAYONCE_EVENTS_EXCHANGE", "payonce.events");
    public static final String COMMANDS = System.getenv().getOrDefault("PAYONCE_COMMANDS_QUEUE", "payonce.commands");
    public static final String DEAD_LETTERS = COMMANDS + ".dlq";
    /** The loopback port the tests' broker listens on. */
    public static final int PORT = Integer.parseInt(System.getenv().getOrDefault("PAYONCE_RABBITMQ_PORT", "5672"));

    private final Connection connection;
    private final Channel channel;

    private Broker(Connection connection, Channel channel) {
        this.connection = connection;
        this.channel = channel;
    }

    public static Broker connect() throws IOException, TimeoutException {
        return connect(PORT);
    }

    /** The broker on loopback port {@code port}, e.g. a {@link PrivateRabbitMq}. */
    public static Broker connect(int port) throws IOException, TimeoutException {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(System.getenv().getOrDefault("PAYONCE_RABBITMQ_HOST", "127.0.0.1"));
        factory.setPort(port);
        Connection connection = factory.newConnection();
        return new Broker(connection, connection.createChannel());
    }

    /** The broker user the tests log in as: the sender their commands name in user-id. */
    public static final String USER = "guest";

    /** A queue of this test's own, deleted with the connection. */
    public String temporaryQueue() throws IOException {
        return channel.queueDeclare().getQueue();
    }

    /** A reply queue of this test's own, named as payonce accepts a sender's reply queues. */
    public String replyQueue() throws IOException {
        return channel.queueDeclare(USER + ".replies." + UUID.randomUUID(), false, true, true, null).getQueue();
    }

    /**
     * A reply queue of this test's own that is full: it holds one message and the broker nacks every
     * publish to it (overflow reject-publish), while the channels of whoever publishes stay open.
     * Taking the message it holds, with {@link #poll}, makes room for one reply.
     */
    public String fullReplyQueue() throws IOException {
        String queue = channel.queueDeclare(USER + ".replies." + UUID.randomUUID(), false, true, true,
                Map.of("x-max-length", 1, "x-overflow", "reject-publish")).getQueue();
        channel.basicPublish("", queue, null, "the one message the queue has room for".getBytes(StandardCharsets.UTF_8));
        return queue;
    }

    /** A durable queue of this test's own bound to {@code exchange} (a durable topic exchange, declared if missing): it outlives a broker restart. */
    public String durableQueueOn(String exchange, String routingKey) throws IOException {
        channel.exchangeDeclare(exchange, "topic", true);
        String queue = channel.queueDeclare("payonce-test-" + UUID.randomUUID(), true, false, false, null).getQueue();
        channel.queueBind(queue, exchange, routingKey);
        return queue;
    }

    /**
     * A quorum queue of this test's own bound to {@code exchange} (a durable topic exchange, declared if
     * missing): on a cluster, it holds what the broker confirmed through the loss of a node.
     */
    public String quorumQueueOn(String exchange, String routingKey) throws IOException {
        channel.exchangeDeclare(exchange, "topic", true);
        String queue = channel.queueDeclare("payonce-test-" + UUID.randomUUID(), true, false, false, Map.of("x-queue-type", "quorum")).getQueue();
        channel.queueBind(queue, exchange, routingKey);
        return queue;
    }

    /** A temporary queue bound to {@code exchange} (a durable topic exchange, declared if missing). */
    public String temporaryQueueOn(String exchange, String routingKey) throws IOException {
        channel.exchangeDeclare(exchange, "topic", true);
        String queue = temporaryQueue();
        channel.queueBind(queue, exchange, routingKey);
        return queue;
    }

    /**
     * A queue of this test's own bound to {@code exchange} for {@code routingKey} that holds nothing and
     * refuses what reaches it: the broker nacks every message routed there to its publisher, as it does
     * for a full queue whose overflow is reject-publish. Deleted with the connection, or by {@link #delete}.
     */
    public String refusingQueueOn(String exchange, String routingKey) throws IOException {
        channel.exchangeDeclare(exchange, "topic", true);
        String queue = channel.queueDeclare("", false, true, true, Map.of("x-max-length", 0, "x-overflow", "reject-publish")).getQueue();
        channel.queueBind(queue, exchange, routingKey);
        return queue;
    }

    public void delete(String queue) throws IOException {
        channel.queueDelete(queue);
    }

    /** As the order system would send a command: signed by its broker login (user-id), keyed, with a reply queue of its own. */
    public static AMQP.BasicProperties commandProperties(String key, String replyTo, String correlation) {
        return new AMQP.BasicProperties.Builder().messageId(key).userId(USER).appId("order-system").replyTo(replyTo)
                .correlationId(correlation).contentType("application/json").build();
    }

    public static String payCommand(String userId, long orderId) {
        return "{\"type\":\"pay\",\"userId\":\"" + userId + "\",\"orderId\":" + orderId + "}";
    }

    /** Sends a pay command to this build's command queue, replied to {@code replyTo} under {@code correlation}. */
    public void sendPay(String key, String replyTo, String correlation, String userId, long orderId) throws IOException {
        sendPayTo(COMMANDS, key, replyTo, correlation, userId, orderId);
    }

    /** The same, to the command queue of an instance a test started with a PAYONCE_COMMANDS_QUEUE of its own. */
    public void sendPayTo(String commands, String key, String replyTo, String correlation, String userId, long orderId) throws IOException {
        publish(commands, "pay", commandProperties(key, replyTo, correlation), payCommand(userId, orderId));
    }

    /** The replies under {@code correlation} that arrive on {@code queue} up to and with the first marked as a repeat. */
    public List<GetResponse> awaitRepliesUntilRepeat(String queue, String correlation, Duration within) throws IOException, InterruptedException {
        List<GetResponse> replies = new ArrayList<>();
        do {
            replies.add(await(queue, m -> correlation.equals(m.getProps().getCorrelationId()), within));
        } while (!Boolean.TRUE.equals(replies.get(replies.size() - 1).getProps().getHeaders().get(Answer.REPLAYED_HEADER)));
        return replies;
    }

    public void publish(String exchange, String routingKey, AMQP.BasicProperties properties, String body) throws IOException {
        channel.basicPublish(exchange, routingKey, properties, body.getBytes(StandardCharsets.UTF_8));
    }

    /** The first message on {@code queue} that {@code wanted} accepts, skipping others; fails after {@code within}. */
    public GetResponse await(String queue, Predicate<GetResponse> wanted, Duration within) {
        return Await.until(() -> nextWanted(queue, wanted), Objects::nonNull, within, "a wanted message on " + queue);
    }

    /** Every message {@code wanted} accepts that arrives on {@code queue} until {@code count} have come; fails after {@code within}. */
    public List<GetResponse> awaitAll(String queue, int count, Predicate<GetResponse> wanted, Duration within) {
        List<GetResponse> messages = new ArrayList<>();
        Await.until(() -> {
            while (messages.size() < count) {
                GetResponse message = nextWanted(queue, wanted);
                if (message == null) {
                    break;
                }
                messages.add(message);
            }
            return messages.size();
        }, received -> received == count, within, count + " wanted messages on " + queue);
        return messages;
    }

    /** Every message on {@code queue} now, taken off it in the order the broker holds them. */
    public List<GetResponse> takeWaiting(String queue) throws IOException {
        List<GetResponse> messages = new ArrayList<>();
        for (GetResponse message = channel.basicGet(queue, true); message != null; message = channel.basicGet(queue, true)) {
            messages.add(message);
        }
        return messages;
    }

    /** The next message on {@code queue} that {@code wanted} accepts, the others before it consumed; null if none is there now. */
    private GetResponse nextWanted(String queue, Predicate<GetResponse> wanted) throws IOException {
        for (GetResponse message = channel.basicGet(queue, true); message != null; message = channel.basicGet(queue, true)) {
            if (wanted.test(message)) {
                return message;
            }
        }
        return null;
    }

    /** How many messages with these ids lie in this build's dead-letter queue; it is emptied on the way. */
    public long deadLetters(Set<String> messageIds) throws IOException {
        long found = 0;
        for (GetResponse message = channel.basicGet(DEAD_LETTERS, true); message != null; message = channel.basicGet(DEAD_LETTERS, true)) {
            found += messageIds.contains(message.getProps().getMessageId()) ? 1 : 0;
        }
        return found;
    }

    /** Returns once {@code queue} exists and someone consumes it (payonce's consumer is up); fails after {@code within}. */
    public void awaitConsumer(String queue, Duration within) {
        Await.until(() -> consumers(queue) > 0, within, "a consumer of " + queue);
    }

    /** Returns once exactly {@code count} consume {@code queue}: each consumer of an instance, after its start or a reconnect. */
    public void awaitConsumers(String queue, long count, Duration within) {
        Await.until(() -> consumers(queue) == count, within, count + " consumers of " + queue);
    }

    /** Whether {@code queue} exists on the broker. */
    public boolean exists(String queue) throws IOException, TimeoutException {
        // A passive declare of a missing queue closes its channel: a channel of its own.
        try (Channel probe = connection.createChannel()) {
            probe.queueDeclarePassive(queue);
            return true;
        } catch (IOException | ShutdownSignalException missing) {
            return false;
        }
    }

    /** How many consume {@code queue}; 0 while it does not exist yet. */
    private long consumers(String queue) throws IOException, TimeoutException {
        // A passive declare of a missing queue closes its channel: a channel of its own each time.
        try (Channel probe = connection.createChannel()) {
            return probe.consumerCount(queue);
        } catch (IOException | ShutdownSignalException notDeclaredYet) {
            return 0;
        }
    }

    /** The next message on {@code queue}, acked, or null if there is none now. */
    public GetResponse poll(String queue) throws IOException {
        return channel.basicGet(queue, true);
    }

    public long messageCount(String queue) throws IOException {
        return channel.messageCount(queue);
    }

    public static String text(GetResponse message) {
        return new String(message.getBody(), StandardCharsets.UTF_8);
    }

    /** Deletes this build's exchanges and queues; what does not exist is passed over. */
    public void deleteRunObjects() throws IOException {
        deleteCommandObjects(COMMANDS);
        channel.exchangeDelete(EVENTS);
    }

    /** Deletes a command queue, its exchange and their dead-letter pair, named as payonce names them. */
    public void deleteCommandObjects(String commands) throws IOException {
        for (String queue : new String[] {commands, commands + ".dlq"}) {
            channel.queueDelete(queue);
        }
        for (String exchange : new String[] {commands, commands + ".dlx"}) {
            channel.exchangeDelete(exchange);
        }
    }

    @Override
    public void close() throws IOException, TimeoutException {
        connection.close();
    }
}
