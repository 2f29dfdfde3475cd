package io.payonce.broker;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import io.payonce.support.PrivateRabbitMq;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Against a real RabbitMQ, on an exchange and a queue of the test's own: only the messages before
 * the first one the broker did not take count as confirmed, which is what the relay marks sent. A nack
 * (the machine's broker, a queue that rejects what overflows it) is the broker not taking messages
 * for now, no refusal of the message: the relay waits for it. The broker refuses a message when it
 * closes the channel on it, over its max_message_size (a node of the test's own, configured so).
 */
class ConfirmingChannelTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(2);
    private static final int MAX_MESSAGE_SIZE = 2048;

    @Test
    void onlyTheMessagesBeforeTheFirstNackCountAsConfirmedAndTheNackIsNoRefusal() throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(System.getenv().getOrDefault("PAYONCE_RABBITMQ_HOST", "127.0.0.1"));
        factory.setPort(Integer.parseInt(System.getenv().getOrDefault("PAYONCE_RABBITMQ_PORT", "5672")));
        String name = "payonce-test-confirms-" + UUID.randomUUID();
        try (Connection connection = factory.newConnection()) {
            Channel setup = connection.createChannel();
            setup.exchangeDeclare(name, "topic", false, true, null);
            setup.queueDeclare(name, false, true, true, Map.of("x-max-length", 2, "x-overflow", "reject-publish"));
            setup.queueBind(name, name, "#");

            ConfirmingChannel channel = ConfirmingChannel.on(null, connection);
            List<ConfirmedPublisher.Outgoing> five = IntStream.range(0, 5).mapToObj(i -> message(name, i, 10)).toList();

            ConfirmedPublisher.Confirmed overflowing = channel.publishAll(five, TIMEOUT);
            assertEquals(2, overflowing.count(), "the queue holds two; the third and later are nacked");
            assertFalse(overflowing.refused(), "a full queue refuses every message routed to it, not this one: " + overflowing);
            setup.queuePurge(name);
            ConfirmedPublisher.Confirmed held = channel.publishAll(five.subList(0, 2), TIMEOUT);
            assertEquals(2, held.count(), "the same channel counts the next call afresh");
            assertFalse(held.refused());
        }
    }

    /** Message by message, each counts as confirmed on its own account: a nack between two acks leaves both acked. */
    @Test
    void eachMessageIsConfirmedOrNotOnItsOwnAccount() throws Exception {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost(System.getenv().getOrDefault("PAYONCE_RABBITMQ_HOST", "127.0.0.1"));
        factory.setPort(Integer.parseInt(System.getenv().getOrDefault("PAYONCE_RABBITMQ_PORT", "5672")));
        String name = "payonce-test-each-" + UUID.randomUUID();
        try (Connection connection = factory.newConnection()) {
            Channel setup = connection.createChannel();
            setup.queueDeclare(name + ".open", false, true, true, null);
            setup.queueDeclare(name + ".full", false, true, true, Map.of("x-max-length", 0, "x-overflow", "reject-publish"));
            ConfirmingChannel channel = ConfirmingChannel.on(null, connection);

            List<String> queues = List.of(".open", ".full", ".open", ".full", ".open");
            List<Boolean> confirmed = channel.publishEach(queues.stream()
                    .map(queue -> new ConfirmedPublisher.Outgoing("", name + queue, new AMQP.BasicProperties(), new byte[10])).toList(), TIMEOUT);

            assertEquals(List.of(true, false, true, false, true), confirmed);
            assertEquals(3, setup.messageCount(name + ".open"));
        }
    }

    /**
     * The broker closes the channel on a message over its size limit, and the confirms of the messages
     * before it may be lost with the channel: the refusal names no message, only that one was refused
     * at or after the first unconfirmed. Alone, the message's refusal is its own.
     */
    @Test
    void aMessageOverTheBrokersSizeLimitIsARefusalAtOrAfterTheFirstUnconfirmed() throws Exception {
        try (PrivateRabbitMq broker = PrivateRabbitMq.startWith("max_message_size = " + MAX_MESSAGE_SIZE + "\n")) {
            ConnectionFactory factory = new ConnectionFactory();
            factory.setHost("127.0.0.1");
            factory.setPort(broker.port());
            String name = "payonce-test-size";
            try (Connection connection = factory.newConnection()) {
                Channel setup = connection.createChannel();
                setup.exchangeDeclare(name, "topic", true);
                setup.queueDeclare(name, true, false, false, null);
                setup.queueBind(name, name, "#");
                ConfirmedPublisher.Outgoing tooLarge = message(name, 1, MAX_MESSAGE_SIZE + 1);

                ConfirmedPublisher.Confirmed batch = ConfirmingChannel.on(null, connection)
                        .publishAll(List.of(message(name, 0, 10), tooLarge, message(name, 2, 10)), TIMEOUT);
                ConfirmedPublisher.Confirmed alone = ConfirmingChannel.on(null, connection).publishAll(List.of(tooLarge), TIMEOUT);
                ConfirmedPublisher.Confirmed small = ConfirmingChannel.on(null, connection).publishAll(List.of(message(name, 3, 10)), TIMEOUT);

                assertTrue(batch.count() <= 1, "nothing from the refused message on is confirmed: " + batch);
                assertTrue(batch.refused() && batch.refusal().contains("PRECONDITION_FAILED"), batch.toString());
                assertEquals(0, alone.count());
                assertTrue(alone.refused(), alone.toString());
                assertEquals(1, small.count(), "the broker takes the next message on a channel of its own");
                assertNull(small.refusal());
            }
        }
    }

    private static ConfirmedPublisher.Outgoing message(String exchange, int number, int bytes) {
        byte[] body = ("m-" + number + "-".repeat(bytes)).substring(0, bytes).getBytes(StandardCharsets.UTF_8);
        return new ConfirmedPublisher.Outgoing(exchange, "event", new AMQP.BasicProperties.Builder().messageId("m-" + number).build(), body);
    }
}
