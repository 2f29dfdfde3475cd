package io.payonce.commands.settlement;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.AMQP;
import io.payonce.broker.ConfirmedPublisher;
import io.payonce.broker.GroupedPublisher;
import io.payonce.commands.intake.Unprocessable;
import io.payonce.commands.outcome.AckLost;
import io.payonce.commands.outcome.OnceRule;
import io.payonce.commands.outcome.Outcome;
import io.payonce.commands.outcome.OutcomeTable;
import io.payonce.errors.ApiException;
import io.payonce.errors.Problem;
import io.payonce.idempotency.Answer;
import io.payonce.metrics.PayonceMetrics;
import io.payonce.shutdown.Draining;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import io.smallrye.reactive.messaging.rabbitmq.RabbitMQRejectMetadata;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.jboss.logging.Logger;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Does what {@link OutcomeTable} decided for a message: the reply and the ack, the nack back to the
 * queue, the dead-letter copy; the broker is told what became of a command here and nowhere else.
 * A reply that fails is a result of its own and goes through the table again: unconfirmed, it is
 * {@link #unreplied}; anything else, even a reply that could not be built, falls to the rows below
 * REPLY ({@link OutcomeTable#unanswered}), never to REPLY again. Settling that fails in any way but a
 * lost ack or nack puts the message back on the queue once, and rejects it to the queue's dead-letter
 * exchange when it fails so again ({@link #lastResort}): no message is left unsettled while its
 * channel stays open, and none goes round for ever. "Once" is each rule's own mark
 * ({@link RequeueMarks}), never the broker's redelivered flag.
 */
public final class MessageSettlement {

    public static final String REASON_HEADER = "x-payonce-reason";
    /** On a dead-letter copy: the broker-checked user-id of its sender, which the copy cannot carry as its own. */
    public static final String SENDER_HEADER = "x-payonce-sender";
    public static final String STATUS_HEADER = "x-payonce-status";
    /** The Location of an answer, as HTTP sends it: on a card pay's 202, the payment whose outcome the sender follows. */
    public static final String LOCATION_HEADER = "x-payonce-location";

    private static final Logger LOG = Logger.getLogger(MessageSettlement.class);
    /** The default exchange, which routes to the queue its routing key names: the way to a reply-to queue. */
    private static final String DEFAULT_EXCHANGE = "";

    private final ObjectMapper json;
    private final OutcomeTable table;
    private final ConfirmedPublisher publisher;
    private final GroupedPublisher replies;
    private final RequeueMarks marks;
    private final String deadLetterExchange;
    private final String deadLetterRoutingKey;
    /** How long a command that must wait (a store down, its twin in flight) stays away before it goes back to the queue. */
    private final Duration requeueAfter;
    private final PayonceMetrics metrics;
    private final Draining draining;

    public MessageSettlement(ObjectMapper json, OutcomeTable table, ConfirmedPublisher publisher, GroupedPublisher replies,
                             RequeueMarks marks, String deadLetterExchange, String deadLetterRoutingKey, Duration requeueAfter, PayonceMetrics metrics,
                             Draining draining) {
        this.json = json;
        this.table = table;
        this.publisher = publisher;
        this.replies = replies;
        this.marks = marks;
        this.deadLetterExchange = deadLetterExchange;
        this.deadLetterRoutingKey = deadLetterRoutingKey;
        this.requeueAfter = requeueAfter;
        this.metrics = metrics;
        this.draining = draining;
    }

    /**
     * The row {@code outcome} that the command's {@code answer}, or its {@code failure}, fell in, performed.
     * A reply that fails is classified again by the rows below REPLY alone, so that it cannot come back here as a reply.
     */
    public Uni<Void> perform(Outcome outcome, Message<byte[]> message, IncomingRabbitMQMetadata amqp, Answer answer, Throwable failure) {
        return switch (outcome) {
            case REPLY -> Uni.createFrom()
                    .deferred(() -> replyAndAck(message, amqp, failure == null ? answer : Answer.problem((ApiException) failure, null)))
                    .onFailure(replyFailed -> !(replyFailed instanceof AckLost))
                    .recoverWithUni(replyFailed -> perform(table.unanswered(replyFailed), message, amqp, null, replyFailed));
            case UNSETTLED -> Uni.createFrom().failure(failure);
            case REQUEUE -> requeue(message, amqp, failure);
            case REQUEUE_NOW -> requeueNow(message, amqp, failure);
            case DEAD_LETTER -> deadLetter(message, amqp, failure);
            case REQUEUE_ONCE -> once(OutcomeTable.onceRuleOf(failure), amqp, () -> requeue(message, amqp, failure),
                    () -> deadLetter(message, amqp, failure));
        };
    }

    /**
     * Settling the message failed in a way the table has no row for, a fault of payonce's own: back
     * to the queue once, after the pause unless the instance is stopping, rather than left unsettled
     * until the channel closes; a command this rule sent back before that fails so again is rejected
     * to the queue's dead-letter exchange, as an unforeseen failure is, so that no message goes round
     * for ever ({@link OnceRule#LAST_RESORT}). Only a lost ack or nack is left to the broker.
     */
    public Uni<Void> lastResort(Message<?> message, IncomingRabbitMQMetadata amqp, Throwable unsettled) {
        LOG.errorf(unsettled, "Command %s could not be settled as its outcome said", amqp.getMessageId().orElse("?"));
        if (draining.stopping()) {
            return requeueNow(message, amqp, unsettled);
        }
        return once(OnceRule.LAST_RESORT, amqp, () -> requeue(message, amqp, unsettled), () -> reject(message, unsettled));
    }

    /**
     * Replied, with the confirm awaited, then acked, and only then: a broker that loses the ack
     * redelivers, and the redelivery replies with the same stored answer.
     */
    private Uni<Void> replyAndAck(Message<?> message, IncomingRabbitMQMetadata amqp, Answer answer) {
        return reply(amqp, answer)
                .flatMap(replied -> ack(message, answer.repeat() ? "replayed" : "executed"))
                .onFailure(ConfirmedPublisher.NotConfirmed.class).recoverWithUni(unreplied -> unreplied(message, amqp, unreplied));
    }

    /**
     * The reply, identical on every redelivery but for the repeat marker, under the command's
     * correlation id; it leaves with the replies of the other commands in hand, each confirmed on its
     * own account ({@link GroupedPublisher}).
     */
    private Uni<Void> reply(IncomingRabbitMQMetadata amqp, Answer answer) {
        if (amqp.getReplyTo().isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        Map<String, Object> headers = new HashMap<>(Map.of(STATUS_HEADER, answer.status(), Answer.REPLAYED_HEADER, answer.repeat()));
        if (answer.location() != null) {
            headers.put(LOCATION_HEADER, answer.location());
        }
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder()
                .correlationId(amqp.getCorrelationId().orElse(amqp.getMessageId().orElse(null)))
                .contentType(answer.status() >= 400 ? Problem.MEDIA_TYPE : "application/json")
                .headers(headers)
                .deliveryMode(ConfirmedPublisher.PERSISTENT)
                .build();
        byte[] body = answer.bodyJson(json).getBytes(StandardCharsets.UTF_8);
        return replies.publish(new ConfirmedPublisher.Outgoing(DEFAULT_EXCHANGE, amqp.getReplyTo().get(), properties, body));
    }

    /**
     * The effect and its answer are stored, but the reply was not confirmed: the command goes back to
     * the queue once ({@link OnceRule#UNREPLIED}), and when it comes back it replies with the stored
     * answer; if that reply fails too, it is acked, and the sender gets the answer by sending the
     * command again. On an instance that is stopping it goes back unmarked, for an instance that stays.
     */
    private Uni<Void> unreplied(Message<?> message, IncomingRabbitMQMetadata amqp, Throwable unreplied) {
        LOG.warnf("Reply to command %s not confirmed: %s", amqp.getMessageId().orElse("?"), unreplied.toString());
        if (draining.stopping()) {
            return requeue(message, amqp, unreplied);
        }
        return once(OnceRule.UNREPLIED, amqp, () -> requeue(message, amqp, unreplied), () -> ack(message, "unreplied"));
    }

    /**
     * {@code rule}'s one requeue ({@code backOnce}) at its first meeting with the command, and
     * {@code thereafter} at any later one. With no mark to read now, the command waits as for a store,
     * back to the queue after the pause, the rule not used up.
     */
    private Uni<Void> once(OnceRule rule, IncomingRabbitMQMetadata amqp, Supplier<Uni<Void>> backOnce, Supplier<Uni<Void>> thereafter) {
        return Uni.createFrom().deferred(() -> marks.meet(amqp, rule))
                .flatMap(meeting -> meeting == RequeueMarks.Meeting.AGAIN ? thereafter.get() : backOnce.get());
    }

    private Uni<Void> ack(Message<?> message, String outcome) {
        metrics.message(outcome);
        return orAckLost(Uni.createFrom().completionStage(message::ack));
    }

    private Uni<Void> requeue(Message<?> message, IncomingRabbitMQMetadata amqp, Throwable notNow) {
        LOG.infof("Command %s back to the queue in %s: %s", amqp.getMessageId().orElse("?"), requeueAfter, notNow.toString());
        metrics.message("requeued");
        return Uni.createFrom().voidItem().onItem().delayIt().by(requeueAfter)
                .flatMap(waited -> orAckLost(Uni.createFrom().completionStage(
                        () -> message.nack(notNow, Metadata.of(new RabbitMQRejectMetadata(true))))));
    }

    /**
     * A command that failed on an instance that is stopping: back to the queue without the pause,
     * since an instance that stays takes it, not this one. Should the channel close first, the broker
     * requeues it all the same.
     */
    private Uni<Void> requeueNow(Message<?> message, IncomingRabbitMQMetadata amqp, Throwable failed) {
        LOG.infof("Command %s back to the queue, the instance stopping: %s", amqp.getMessageId().orElse("?"), failed.toString());
        metrics.message("requeued");
        return orAckLost(Uni.createFrom().completionStage(() -> message.nack(failed, Metadata.of(new RabbitMQRejectMetadata(true)))));
    }

    /** An ack or a nack that failed means the channel is gone: nothing more to decide about the message. */
    private static Uni<Void> orAckLost(Uni<Void> ackOrNack) {
        return ackOrNack.onFailure().transform(AckLost::new);
    }

    /**
     * A message that can never succeed leaves the queue for the dead-letter queue, with the reason,
     * and is acked only once the dead-letter copy is confirmed. Anything unforeseen goes there too,
     * named, rather than round the queue for ever.
     */
    private Uni<Void> deadLetter(Message<byte[]> message, IncomingRabbitMQMetadata amqp, Throwable never) {
        String reason = reasonOf(never);
        if (never instanceof Unprocessable || OutcomeTable.comesBackLater(never)) {
            // Never the body: a card command carries a card token. The reason names fields, not their values.
            LOG.warnf("Command %s from %s dead-lettered: %s", amqp.getMessageId().orElse("?"), amqp.getUserId().orElse("?"), reason);
        } else {
            LOG.errorf(never, "Command %s could not be processed", amqp.getMessageId().orElse("?"));
        }
        Map<String, Object> headers = new HashMap<>(amqp.getHeaders());
        headers.put(REASON_HEADER, reason);
        // Set or removed here, never as the sender wrote it: a header of that name in the message proves nothing.
        amqp.getUserId().ifPresentOrElse(sender -> headers.put(SENDER_HEADER, sender), () -> headers.remove(SENDER_HEADER));
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder()
                .messageId(amqp.getMessageId().orElse(null))
                .appId(amqp.getAppId().orElse(null))
                .correlationId(amqp.getCorrelationId().orElse(null))
                .contentType(amqp.getContentType().orElse(null))
                .headers(headers)
                .deliveryMode(ConfirmedPublisher.PERSISTENT)
                .build();
        return Uni.createFrom()
                .deferred(() -> publisher.publish(new ConfirmedPublisher.Outgoing(deadLetterExchange, deadLetterRoutingKey, properties,
                        message.getPayload())))
                .flatMap(copied -> ack(message, "dead_lettered"))
                // The queue's own dead-letter exchange takes it then, without the reason.
                .onFailure(failure -> !(failure instanceof AckLost)).recoverWithUni(copyFailed -> reject(message, copyFailed));
    }

    /** What a dead-letter copy's reason header says. */
    private static String reasonOf(Throwable never) {
        if (never instanceof Unprocessable) {
            return never.getMessage();
        }
        if (OutcomeTable.comesBackLater(never)) {
            ApiException comeBack = (ApiException) never;
            return comeBack.code().status() + " " + comeBack.code() + " when it came back, and no reply-to to tell the sender that"
                    + " nothing was done: " + comeBack.detail();
        }
        return "unexpected failure: " + never;
    }

    private Uni<Void> reject(Message<?> message, Throwable reason) {
        metrics.message("dead_lettered");
        return orAckLost(Uni.createFrom().completionStage(() -> message.nack(reason, Metadata.of(new RabbitMQRejectMetadata(false)))));
    }
}
