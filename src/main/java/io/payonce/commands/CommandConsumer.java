package io.payonce.commands;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.AMQP;
import io.payonce.auth.Caller;
import io.payonce.broker.ConfirmedPublisher;
import io.payonce.broker.GroupedPublisher;
import io.payonce.config.PayonceConfig;
import io.payonce.db.DependencyFailure;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.errors.Problem;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.KeyedRequest;
import io.payonce.idempotency.WriteOperation;
import io.payonce.input.Identifiers;
import io.payonce.metrics.PayonceMetrics;
import io.payonce.metrics.RepeatDefence;
import io.payonce.payment.Payments;
import io.payonce.payment.refund.RefundRequest;
import io.payonce.payment.refund.RefundService;
import io.payonce.shutdown.Draining;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import io.smallrye.reactive.messaging.rabbitmq.RabbitMQRejectMetadata;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.validation.ConstraintViolation;
import jakarta.validation.Validator;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.eclipse.microprofile.reactive.messaging.Metadata;
import org.jboss.logging.Logger;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Pay and refund commands from the queue, through the same guard and the same pipelines as HTTP.
 * The sender is the AMQP user-id, which the broker checks against the login of the connection that
 * published: only the senders that payonce.commands allows for a command's kind (a pay from a
 * balance, a card pay, a refund) are heard. The message-id is the key, scoped to the caller the
 * command acts for, as its HTTP twin would be: the user for a pay, the sender for a refund. So a
 * redelivery, or the same command sent again, finds its claim and gets the first answer; no second
 * effect.
 *
 * <p>What happens to a message, decided here and nowhere else (the table: {@link Outcome}):
 * <ul>
 * <li>an answer (a success, or a business refusal such as 402, 404 or 409): replied to its
 * reply-to, if any, with the confirm awaited, then acked, and only then: a broker that loses the
 * ack redelivers, and the redelivery replies with the same stored answer. A card pay, or a refund to
 * the card, whose outcome is not known yet is an answer too, 202 with the payment's or refund's
 * location, as over HTTP: the sender sends the command again later under the same message-id, which
 * resumes it like an HTTP retry; held on the queue instead, it would hold a consumer until the
 * recovery job learns the outcome;</li>
 * <li>"come back later" (409 CARD_PAYMENT_PENDING: the order's card payment waits for its
 * processor; 409 REFUND_PENDING: a refund to the card with this refund number waits for its
 * processor; 409 PAYMENT_IN_PROGRESS to a card pay whose twin, the same key, holds its charge): an
 * answer that says nothing was done, replied and acked like any other when there is a reply-to, for
 * the sender to send the command again later; held on the queue, it could hold a consumer as long
 * as the processor. With no reply-to nobody would hear it, and an ack would lose the command: it goes
 * back to the queue after the pause, once, and if its redelivery is told the same, it is
 * dead-lettered with the code as its reason;</li>
 * <li>"not now" (a store down, a balance pay's twin in flight): nacked back to the queue after a
 * pause, so that it waits for the store instead of spinning, and never dead-lettered;</li>
 * <li>a message that can never succeed (too large, unreadable, invalid, no message-id, a sender not
 * allowed, a reply-to that is not the sender's): published to the dead-letter queue with the reason
 * in its headers, then acked; if even that copy fails, rejected to the queue's dead-letter exchange;</li>
 * <li>anything unforeseen: back to the queue once, then dead-lettered, so that no message goes round
 * for ever;</li>
 * <li>a command that reaches an instance already stopping: not begun, and back to the queue after the
 * same pause, for an instance that stays. The command in hand when the stop began is finished and
 * acked as above before the broker connection closes ({@link Draining}); but if it fails once the
 * stop has begun, it goes back to the queue at once, whatever the failure: it may have failed only
 * because the stop closed a store under it (the pool closes when the drain's bound runs out), and a
 * valid command must never be dead-lettered or acked for that;</li>
 * <li>should settling a message fail in any other way than a lost ack or nack (a fault of payonce's
 * own): back to the queue, never left unsettled.</li>
 * </ul>
 * <p>One instance handles {@code PAYONCE_COMMANDS_IN_FLIGHT} commands at once: the messaging
 * library's copies of the channel, each a consumer of the queue with one command in hand, all through
 * this one method. So two commands for one order may run at the same moment, here or on two
 * instances, as two HTTP pays may: the guard, the pay lock, the order's compare-and-set and its one
 * live payment decide between them, never their order on the queue.
 */
@ApplicationScoped
public class CommandConsumer {

    static final String COMMANDS = "payonce-commands";
    static final String REASON_HEADER = "x-payonce-reason";
    /** On a dead-letter copy: the broker-checked user-id of its sender, which the copy cannot carry as its own. */
    static final String SENDER_HEADER = "x-payonce-sender";
    static final String STATUS_HEADER = "x-payonce-status";
    /** The Location of an answer, as HTTP sends it: on a card pay's 202, the payment whose outcome the sender follows. */
    static final String LOCATION_HEADER = "x-payonce-location";

    private static final Logger LOG = Logger.getLogger(CommandConsumer.class);
    /** The default exchange, which routes to the queue its routing key names: the way to a reply-to queue. */
    private static final String DEFAULT_EXCHANGE = "";
    /** A command is a few short fields; anything larger is not one, and is not parsed. */
    static final int MAX_BODY_BYTES = 4096;
    /** The broker's direct reply-to: replies to the very connection that sent the command. */
    private static final String DIRECT_REPLY_TO = "amq.rabbitmq.reply-to";
    private static final Pattern SENDER = Pattern.compile(Identifiers.USER_ID);

    private final ObjectMapper json;
    private final Validator validator;
    private final IdempotencyGuard guard;
    private final Payments payments;
    private final RefundService refunds;
    private final ConfirmedPublisher publisher;
    private final GroupedPublisher replies;
    private final String deadLetterExchange;
    private final String deadLetterRoutingKey;
    private final Set<String> paySenders;
    private final Set<String> cardPaySenders;
    private final Set<String> refundSenders;
    /** How long a command that must wait (a store down, its twin in flight) stays away before it goes back to the queue. */
    private final Duration requeueAfter;
    private final PayonceMetrics metrics;
    private final Draining draining;

    CommandConsumer(ObjectMapper json, Validator validator, IdempotencyGuard guard, Payments payments, RefundService refunds,
                    ConfirmedPublisher publisher, GroupedPublisher replies,
                    @ConfigProperty(name = "mp.messaging.incoming." + COMMANDS + ".queue.name") String queue,
                    @ConfigProperty(name = "mp.messaging.incoming." + COMMANDS + ".dead-letter-exchange") String deadLetterExchange,
                    PayonceConfig config, PayonceMetrics metrics, Draining draining) {
        this.json = json;
        this.validator = validator;
        this.guard = guard;
        this.payments = payments;
        this.refunds = refunds;
        this.publisher = publisher;
        this.replies = replies;
        this.deadLetterExchange = deadLetterExchange;
        this.deadLetterRoutingKey = queue;
        this.paySenders = config.commands().paySenders().orElse(Set.of());
        this.cardPaySenders = config.commands().cardPaySenders().orElse(Set.of());
        this.refundSenders = config.commands().refundSenders().orElse(Set.of());
        this.requeueAfter = config.commands().requeueAfter();
        this.metrics = metrics;
        this.draining = draining;
    }

    @Incoming(COMMANDS)
    Uni<Void> consume(Message<byte[]> message) {
        IncomingRabbitMQMetadata amqp = message.getMetadata(IncomingRabbitMQMetadata.class).orElseThrow();
        return draining.unlessStopping(() -> handle(message, amqp, Uni.createFrom().deferred(() -> execute(message.getPayload(), amqp))),
                () -> handle(message, amqp, Uni.createFrom().failure(new Stopping())));
    }

    /**
     * What becomes of a message, by what its command came to; {@link #outcome} reads the rows top to
     * bottom, the first that fits decides:
     * <pre>
     * an answer: a success, a 202, a refusal                             REPLY        replied, then acked
     * come back later ({@link #comesBackLater}), with a reply-to         REPLY
     * the ack or the nack itself failed                                  UNSETTLED    nothing more: the broker redelivers it
     * never begun, the instance stopping                                 REQUEUE      back to the queue after the pause
     * any other failure once the stop has begun                          REQUEUE_NOW  back to the queue at once
     * come back later, no reply-to: on its first delivery                REQUEUE      back to the queue after the pause
     * come back later, no reply-to: redelivered                          DEAD_LETTER  copied with the code as the reason, then acked
     * not now: a store down, a balance pay's twin in flight              REQUEUE      back to the queue after the pause
     * can never succeed: unreadable, invalid, not allowed                DEAD_LETTER  copied with the reason, then acked
     * unforeseen: on its first delivery                                  REQUEUE      back to the queue after the pause
     * unforeseen: redelivered                                            DEAD_LETTER
     * </pre>
     * A reply that fails is a result of its own and goes through the table again: unconfirmed, it is
     * {@link #unreplied}; anything else, even a reply that could not be built, falls to the rows below
     * REPLY ({@link #unanswered}), never to REPLY again. Settling that fails in any way but a lost ack
     * or nack puts the message back on the queue once, and rejects it to the queue's dead-letter
     * exchange when it fails so again redelivered ({@link #lastResort}): no message is left unsettled
     * while its channel stays open, and none goes round for ever.
     */
    enum Outcome {
        REPLY, UNSETTLED, REQUEUE, REQUEUE_NOW, DEAD_LETTER
    }

    /** What becomes of {@code message}, given what its {@code command} came to: the table of {@link Outcome}. */
    Uni<Void> handle(Message<byte[]> message, IncomingRabbitMQMetadata amqp, Uni<Answer> command) {
        return command.onItemOrFailure().transformToUni((answer, failure) -> perform(outcome(failure, amqp), message, amqp, answer, failure))
                .onFailure(unsettled -> !(unsettled instanceof AckLost)).recoverWithUni(unsettled -> lastResort(message, amqp, unsettled))
                // A failed Uni would end the channel: a message the broker could not be told about is
                // redelivered when the channel reconnects.
                .onFailure().invoke(e -> LOG.warnf("Command %s left unsettled: %s", amqp.getMessageId().orElse("?"), e.toString()))
                .onFailure().recoverWithNull();
    }

    /**
     * The row {@code outcome} that the command's {@code answer}, or its {@code failure}, fell in, performed.
     * A reply that fails is classified again by the rows below REPLY alone, so that it cannot come back here as a reply.
     */
    private Uni<Void> perform(Outcome outcome, Message<byte[]> message, IncomingRabbitMQMetadata amqp, Answer answer, Throwable failure) {
        return switch (outcome) {
            case REPLY -> Uni.createFrom()
                    .deferred(() -> replyAndAck(message, amqp, failure == null ? answer : Answer.problem((ApiException) failure, null)))
                    .onFailure(replyFailed -> !(replyFailed instanceof AckLost))
                    .recoverWithUni(replyFailed -> perform(unanswered(replyFailed, amqp), message, amqp, null, replyFailed));
            case UNSETTLED -> Uni.createFrom().failure(failure);
            case REQUEUE -> requeue(message, amqp, failure);
            case REQUEUE_NOW -> requeueNow(message, amqp, failure);
            case DEAD_LETTER -> deadLetter(message, amqp, failure);
        };
    }

    /** The table of {@link Outcome}, row by row; {@code failure} is null for an answer. */
    private Outcome outcome(Throwable failure, IncomingRabbitMQMetadata amqp) {
        if (failure == null || isAnAnswer(kindOf(failure)) || comesBackLater(failure) && amqp.getReplyTo().isPresent()) {
            return Outcome.REPLY;
        }
        return unanswered(failure, amqp);
    }

    /** The rows of {@link Outcome} below REPLY: a failure that is no answer, or a reply that failed. */
    private Outcome unanswered(Throwable failure, IncomingRabbitMQMetadata amqp) {
        ErrorCode.Kind kind = kindOf(failure);
        if (failure instanceof AckLost) {
            return Outcome.UNSETTLED;
        }
        if (failure instanceof Stopping) {
            return Outcome.REQUEUE;
        }
        if (draining.stopping()) {
            return Outcome.REQUEUE_NOW;
        }
        if (comesBackLater(failure)) {
            // The broker's redelivered flag is the bound: a classic queue counts no deliveries, and a
            // count kept by this instance would start again on another.
            return amqp.isRedeliver() ? Outcome.DEAD_LETTER : Outcome.REQUEUE;
        }
        if (kind == ErrorCode.Kind.NOT_NOW || DependencyFailure.isTransient(failure)) {
            return Outcome.REQUEUE;
        }
        if (failure instanceof Unprocessable || kind == ErrorCode.Kind.INVALID) {
            return Outcome.DEAD_LETTER;
        }
        return amqp.isRedeliver() ? Outcome.DEAD_LETTER : Outcome.REQUEUE;
    }

    private static ErrorCode.Kind kindOf(Throwable failure) {
        return failure instanceof ApiException refused ? refused.code().kind() : null;
    }

    /** A refusal is replied and acked, whether or not anyone hears it: it is the command's final answer. */
    private static boolean isAnAnswer(ErrorCode.Kind kind) {
        return kind != null && switch (kind) {
            case RECORDED, REFUSED, FAILED -> true;
            case INVALID, NOT_NOW, RETRY_LATER -> false;
        };
    }

    /**
     * "Nothing was done: send it again later", for longer than the queue's pause: a command for an
     * order whose card payment waits for its processor, which can last until the recovery job learns
     * the outcome, or a card pay whose twin holds its charge, which can last the processor's timeout.
     * Held on the queue that long, the command would hold a consumer with it; so it is an answer
     * for its sender to act on, and a sender that gave no reply-to cannot.
     */
    private static boolean comesBackLater(Throwable failure) {
        return kindOf(failure) == ErrorCode.Kind.RETRY_LATER || failure instanceof TwinCharging;
    }

    private Uni<Answer> execute(byte[] body, IncomingRabbitMQMetadata amqp) {
        Command command = read(body);
        String key = amqp.getMessageId().orElse(null);
        String sender = allowedSender(amqp, command);
        requireOwnReplyQueue(amqp, sender);
        if (command instanceof Command.Pay pay) {
            KeyedRequest keyed = keyed(WriteOperation.PAY, pay.orderId(), key, "/orders/" + pay.orderId() + "/pay");
            return pay.byCard() ? payByCard(pay, keyed, sender)
                    : payments.pay(new Caller(pay.userId(), false), pay.orderId(), keyed, pay.payRequest());
        }
        Command.Refund refund = (Command.Refund) command;
        return refunds.refund(new Caller(sender, true),
                keyed(WriteOperation.REFUND, refund.orderId(), key, "/orders/" + refund.orderId() + "/refunds"),
                refund.orderId(), new RefundRequest(refund.refundNo(), refund.amount()));
    }

    /**
     * A card pay, logged with the broker sender that started it, so that every card charge can be
     * traced to a service (never with its card token). While a twin (the same key, by HTTP or on
     * another instance) holds the charge, its 409 PAYMENT_IN_PROGRESS means come back later, as a
     * CARD_PAYMENT_PENDING does ({@link #comesBackLater}), not wait on the queue: a charge lasts up to
     * the processor's timeout, and up to its lease after a crash, and a command requeued all that while
     * would hold one of this instance's consumers. A balance pay's twin holds the pay lock for moments
     * only: that one waits on the queue.
     */
    private Uni<Answer> payByCard(Command.Pay pay, KeyedRequest keyed, String sender) {
        LOG.infof("Card pay command %s from sender %s: order %d of user %s", keyed.key().value(), sender, pay.orderId(), pay.userId());
        return payments.pay(new Caller(pay.userId(), false), pay.orderId(), keyed, pay.payRequest())
                .onFailure(CommandConsumer::inProgress).transform(twin -> new TwinCharging());
    }

    private static boolean inProgress(Throwable failure) {
        return failure instanceof ApiException refused && refused.code() == ErrorCode.PAYMENT_IN_PROGRESS;
    }

    /**
     * The broker-checked user-id of the sender, if it may send this kind of command: a pay from a
     * balance, a card pay and a refund each have their own list of senders.
     */
    private String allowedSender(IncomingRabbitMQMetadata amqp, Command command) {
        String sender = amqp.getUserId().orElseThrow(() -> new Unprocessable("user-id missing: it names the sender"));
        boolean pay = command instanceof Command.Pay;
        boolean byCard = pay && ((Command.Pay) command).byCard();
        Set<String> allowed = byCard ? cardPaySenders : pay ? paySenders : refundSenders;
        if (!SENDER.matcher(sender).matches() || !allowed.contains(sender)) {
            throw new Unprocessable("sender " + sender + " may not send " + (byCard ? "card pay" : pay ? "pay" : "refund") + " commands");
        }
        return sender;
    }

    /**
     * A reply goes only where the sender can read it: the broker's direct reply-to, or a queue named
     * {@code <sender>.replies} or {@code <sender>.replies.<anything>}; never into another service's queue.
     */
    private static void requireOwnReplyQueue(IncomingRabbitMQMetadata amqp, String sender) {
        amqp.getReplyTo().ifPresent(replyTo -> {
            boolean own = replyTo.startsWith(DIRECT_REPLY_TO) || replyTo.equals(sender + ".replies")
                    || replyTo.startsWith(sender + ".replies.");
            if (!own) {
                throw new Unprocessable("reply-to " + replyTo + " is not a reply queue of " + sender);
            }
        });
    }

    /** The key as HTTP reads it, a missing or malformed one refused alike; a repeat counts as caught by the message id. */
    private KeyedRequest keyed(WriteOperation operation, long orderId, String messageId, String instance) {
        try {
            return guard.read(operation, orderId, messageId, instance).caughtAs(RepeatDefence.MESSAGE_ID);
        } catch (ApiException invalidKey) {
            throw new Unprocessable("message-id: " + invalidKey.detail());
        }
    }

    private Command read(byte[] body) {
        if (body.length > MAX_BODY_BYTES) {
            throw new Unprocessable("the body is over " + MAX_BODY_BYTES + " bytes");
        }
        Command command;
        try {
            command = json.readValue(body, Command.class);
        } catch (IOException unreadable) {
            throw new Unprocessable("the body is not a pay or refund command: " + unreadable.getClass().getSimpleName());
        }
        if (command == null) {
            throw new Unprocessable("the body is empty");
        }
        requireValid(validator.validate(command));
        if (command instanceof Command.Pay pay) {
            requireValid(validator.validate(pay.payRequest()));
        }
        return command;
    }

    private static void requireValid(Set<? extends ConstraintViolation<?>> violations) {
        if (!violations.isEmpty()) {
            throw new Unprocessable("invalid " + violations.stream()
                    .map(v -> v.getPropertyPath() + " " + v.getMessage())
                    .sorted(Comparator.naturalOrder())
                    .collect(Collectors.joining(", ")));
        }
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
     * the queue once, and its redelivery replies with the stored answer; a redelivery whose reply fails
     * too is acked, and the sender gets the answer by sending the command again.
     */
    private Uni<Void> unreplied(Message<?> message, IncomingRabbitMQMetadata amqp, Throwable unreplied) {
        LOG.warnf("Reply to command %s not confirmed: %s", amqp.getMessageId().orElse("?"), unreplied.toString());
        return amqp.isRedeliver() && !draining.stopping() ? ack(message, "unreplied") : requeue(message, amqp, unreplied);
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

    /**
     * Settling the message failed in a way the table has no row for, a fault of payonce's own: back
     * to the queue, after the pause unless the instance is stopping, rather than left unsettled until
     * the channel closes; a redelivery that fails so again is rejected to the queue's dead-letter
     * exchange, as an unforeseen failure is, so that no message goes round for ever. Only a lost ack
     * or nack is left to the broker.
     */
    private Uni<Void> lastResort(Message<?> message, IncomingRabbitMQMetadata amqp, Throwable unsettled) {
        LOG.errorf(unsettled, "Command %s could not be settled as its outcome said", amqp.getMessageId().orElse("?"));
        if (draining.stopping()) {
            return requeueNow(message, amqp, unsettled);
        }
        return amqp.isRedeliver() ? reject(message, unsettled) : requeue(message, amqp, unsettled);
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
        if (never instanceof Unprocessable || comesBackLater(never)) {
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
        return publisher.publish(new ConfirmedPublisher.Outgoing(deadLetterExchange, deadLetterRoutingKey, properties, message.getPayload()))
                .flatMap(copied -> ack(message, "dead_lettered"))
                // The queue's own dead-letter exchange takes it then, without the reason.
                .onFailure(failure -> !(failure instanceof AckLost)).recoverWithUni(copyFailed -> reject(message, copyFailed));
    }

    /** What a dead-letter copy's reason header says. */
    private static String reasonOf(Throwable never) {
        if (never instanceof Unprocessable) {
            return never.getMessage();
        }
        if (comesBackLater(never)) {
            ApiException comeBack = (ApiException) never;
            return comeBack.code().status() + " " + comeBack.code() + " when redelivered, and no reply-to to tell the sender that"
                    + " nothing was done: " + comeBack.detail();
        }
        return "unexpected failure: " + never;
    }

    private Uni<Void> reject(Message<?> message, Throwable reason) {
        metrics.message("dead_lettered");
        return orAckLost(Uni.createFrom().completionStage(() -> message.nack(reason, Metadata.of(new RabbitMQRejectMetadata(false)))));
    }

    /** An ack or a nack that failed: the broker could not be told what became of a message; the channel's recovery redelivers it. */
    static final class AckLost extends RuntimeException {
        AckLost(Throwable cause) {
            super("ack or nack failed", cause, false, false);
        }
    }

    /** A command that reached an instance already stopping: never begun. */
    static final class Stopping extends RuntimeException {
        Stopping() {
            super("the instance is stopping", null, false, false);
        }
    }

    /** A card pay's 409 PAYMENT_IN_PROGRESS: its twin holds the charge, for as long as the processor takes. */
    static final class TwinCharging extends ApiException {
        TwinCharging() {
            super(ErrorCode.PAYMENT_IN_PROGRESS);
        }
    }

    /** A command that can never succeed, however often it is sent. */
    static final class Unprocessable extends RuntimeException {
        Unprocessable(String reason) {
            super(reason, null, false, false);
        }
    }
}
