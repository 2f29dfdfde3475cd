package io.payonce.commands;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.BasicProperties;
import com.rabbitmq.client.Envelope;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.payonce.commands.outcome.OnceRule;
import io.payonce.commands.settlement.RequeueMarks;
import io.payonce.config.PayonceConfig;
import io.payonce.metrics.PayonceMetrics;
import io.payonce.shutdown.Draining;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import io.smallrye.reactive.messaging.rabbitmq.RabbitMQRejectMetadata;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;

import java.lang.reflect.Constructor;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The consumer's table without a broker or a store: a consumer that executes nothing and has no
 * publisher (a reply or a dead-letter copy that got as far as publishing fails at once, outside the
 * table), requeue marks kept in memory ({@link #marks}), and messages whose acks and nacks are
 * written down, in {@link #settled}, as "acked", "requeued" or "rejected".
 */
final class SettledMessages {

    final List<String> settled = new CopyOnWriteArrayList<>();

    /** The marks of the rules that send a command back once, kept here as MariaDB keeps them: by sender, message-id and rule. */
    final Set<String> marks = ConcurrentHashMap.newKeySet();

    final CommandConsumer consumer;

    SettledMessages() {
        this(Set.of());
    }

    /** {@code broken}: rules whose mark throws at once, a fault of payonce's own that no row of the table names. */
    SettledMessages(Set<OnceRule> broken) {
        consumer = new CommandConsumer(new ObjectMapper(), null, null, null, null, null, null, (amqp, rule) -> {
            if (broken.contains(rule)) {
                throw new IllegalStateException("a fault in the marks of " + rule);
            }
            return meet(amqp, rule);
        }, "commands", "commands.dlx", noSenders(), new PayonceMetrics(new SimpleMeterRegistry()),
                new Draining(Optional.of(Duration.ofSeconds(1))));
    }

    /** As {@code StoredRequeueMarks}: the first meeting marks, and the mark stays. */
    private Uni<RequeueMarks.Meeting> meet(IncomingRabbitMQMetadata amqp, OnceRule rule) {
        String mark = amqp.getUserId().orElseThrow() + "/" + amqp.getMessageId().orElseThrow() + "/" + rule;
        return Uni.createFrom().item(marks.add(mark) ? RequeueMarks.Meeting.FIRST : RequeueMarks.Meeting.AGAIN);
    }

    /** A message whose ack and nack are written down in {@link #settled}. */
    Message<byte[]> recorded(IncomingRabbitMQMetadata amqp) {
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

    /** A command with a reply queue, or none if {@code replyTo} is null, delivered as the connector would (it keeps that constructor to itself). */
    static IncomingRabbitMQMetadata delivered(boolean redelivered, String replyTo) throws ReflectiveOperationException {
        return delivered(new AMQP.BasicProperties.Builder().messageId("msg-1").userId("guest").replyTo(replyTo).build(), redelivered);
    }

    /** A message with {@code properties}, delivered as the connector would. */
    static IncomingRabbitMQMetadata delivered(AMQP.BasicProperties properties, boolean redelivered) throws ReflectiveOperationException {
        Constructor<IncomingRabbitMQMetadata> delivery = IncomingRabbitMQMetadata.class.getDeclaredConstructor(BasicProperties.class, Envelope.class);
        delivery.setAccessible(true);
        return delivery.newInstance(properties, new Envelope(1, redelivered, "", "commands"));
    }

    /**
     * Settings that allow no sender, with a pause of 1 ms before a requeue: nothing here is executed, only settled,
     * and no test here times the pause (UnconfirmedReplyTest does, on a running instance).
     */
    private static PayonceConfig noSenders() {
        PayonceConfig.Commands commands = (PayonceConfig.Commands) Proxy.newProxyInstance(SettledMessages.class.getClassLoader(),
                new Class<?>[] {PayonceConfig.Commands.class},
                (proxy, method, args) -> method.getName().equals("requeueAfter") ? Duration.ofMillis(1) : Optional.empty());
        return (PayonceConfig) Proxy.newProxyInstance(SettledMessages.class.getClassLoader(), new Class<?>[] {PayonceConfig.class},
                (proxy, method, args) -> method.getName().equals("commands") ? commands : null);
    }
}
