package io.payonce.commands;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BasicProperties;
import com.rabbitmq.client.Envelope;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.payonce.config.PayonceConfig;
import io.payonce.idempotency.Answer;
import io.payonce.metrics.PayonceMetrics;
import io.payonce.shutdown.Draining;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import io.smallrye.reactive.messaging.rabbitmq.RabbitMQRejectMetadata;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Constructor;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A reply that cannot even be built (its body does not serialize, a fault of payonce's own), or a
 * settling that fails in a way the consumer's table has no row for, still settles its message: back
 * to the queue, never left unacked on an open channel, where the broker would hold it, and a place
 * in the consumer's prefetch with it, until the channel closed. No store is needed: nothing here
 * gets as far as the broker.
 */
class SettlingFaultTest {

    private static final Duration WAIT = Duration.ofSeconds(5);

    private final List<String> settled = new CopyOnWriteArrayList<>();

    /** No publisher: a reply or a dead-letter copy that got as far as publishing would fail at once, outside the table. */
    private final CommandConsumer consumer = new CommandConsumer(new ObjectMapper(), null, null, null, null, null, "commands", "commands.dlx",
            noSenders(), new PayonceMetrics(new SimpleMeterRegistry()), new Draining(Optional.of(Duration.ofSeconds(1))));

    @Test
    void anAnswerWhoseReplyCannotBeBuiltGoesBackToTheQueue() throws Exception {
        IncomingRabbitMQMetadata amqp = delivered(false);

        consumer.handle(recorded(amqp), amqp, Uni.createFrom().item(Answer.created(new Object()))).await().atMost(WAIT);

        assertEquals(List.of("requeued"), settled);
    }

    /**
     * Redelivered, the failed reply is dead-lettered; the copy fails too, in a way no row of the table
     * names: the message is rejected to the queue's own dead-letter exchange, not sent round again.
     */
    @Test
    void aRedeliveryWhoseSettlingFailsOutsideTheTableIsRejectedNotSentRoundAgain() throws Exception {
        IncomingRabbitMQMetadata amqp = delivered(true);

        consumer.handle(recorded(amqp), amqp, Uni.createFrom().item(Answer.created(new Object()))).await().atMost(WAIT);

        assertEquals(List.of("rejected"), settled);
    }

    /** A message whose ack and nack are written down in {@link #settled}. */
    private Message<byte[]> recorded(IncomingRabbitMQMetadata amqp) {
        return Message.of(new byte[0], Metadata.of(amqp),
                ack -> {
                    settled.add("acked");
                    return CompletableFuture.completedFuture(null);
                },
                (reason, nack) -> {
                    boolean requeue = nack.get(RabbitMQRejectMetadata.class).map(RabbitMQRejectMetadata::isRequeue).orElse(false);
                    settled.add(requeue ? "requeued" : "rejected");
                    return CompletableFuture.completedFuture(null);
                });
    }

    /** A command with a reply queue, delivered as the connector would (it keeps that constructor to itself). */
    private static IncomingRabbitMQMetadata delivered(boolean redelivered) throws ReflectiveOperationException {
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder().messageId("msg-1").userId("guest").replyTo("guest.replies").build();
        Constructor<IncomingRabbitMQMetadata> delivery = IncomingRabbitMQMetadata.class.getDeclaredConstructor(BasicProperties.class, Envelope.class);
        delivery.setAccessible(true);
        return delivery.newInstance(properties, new Envelope(1, redelivered, "", "commands"));
    }

    /** Settings that allow no sender: nothing here is executed, only settled. */
    private static PayonceConfig noSenders() {
        PayonceConfig.Commands commands = (PayonceConfig.Commands) Proxy.newProxyInstance(SettlingFaultTest.class.getClassLoader(),
                new Class<?>[] {PayonceConfig.Commands.class}, (proxy, method, args) -> Optional.empty());
        return (PayonceConfig) Proxy.newProxyInstance(SettlingFaultTest.class.getClassLoader(), new Class<?>[] {PayonceConfig.class},
                (proxy, method, args) -> method.getName().equals("commands") ? commands : null);
    }
}
