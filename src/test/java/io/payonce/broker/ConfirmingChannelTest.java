package io.payonce.broker;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import com.rabbitmq.client.Connection;
import com.rabbitmq.client.ConnectionFactory;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Against the machine's RabbitMQ, on an exchange and a queue of the test's own: a queue that
 * refuses what it cannot hold makes the broker nack the rest of a batch, and only the messages
 * before the first nack count as confirmed, which is what the relay marks sent.
 */
class ConfirmingChannelTest {

    @Test
    void onlyTheMessagesBeforeTheFirstNackCountAsConfirmed() throws Exception {
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
            List<ConfirmedPublisher.Outgoing> five = IntStream.range(0, 5).mapToObj(i -> new ConfirmedPublisher.Outgoing(name, "event",
                    new AMQP.BasicProperties.Builder().messageId("m-" + i).build(), ("m-" + i).getBytes(StandardCharsets.UTF_8))).toList();

            assertEquals(2, channel.publishAll(five, Duration.ofSeconds(2)), "the queue holds two; the third and later are nacked");
            setup.queuePurge(name);
            assertEquals(2, channel.publishAll(five.subList(0, 2), Duration.ofSeconds(2)), "the same channel counts the next call afresh");
        }
    }
}
