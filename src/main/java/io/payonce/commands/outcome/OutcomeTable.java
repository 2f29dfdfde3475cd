package io.payonce.commands.outcome;

import io.payonce.commands.intake.Unprocessable;
import io.payonce.db.DependencyFailure;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.shutdown.Draining;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;

/**
 * What becomes of a message, by what its command came to, decided here and nowhere else;
 * {@link #outcome} reads the rows top to bottom, the first that fits decides:
 * <pre>
 * an answer: a success, a 202, a refusal                             REPLY        replied, then acked
 * come back later ({@link #comesBackLater}), with a reply-to         REPLY
 * the ack or the nack itself failed                                  UNSETTLED    nothing more: the broker redelivers it
 * never begun, the instance stopping                                 REQUEUE      back to the queue after the pause
 * any other failure once the stop has begun                          REQUEUE_NOW  back to the queue at once
 * come back later, no reply-to                                       REQUEUE_ONCE back to the queue after the pause, once;
 *                                                                                 then copied with the code as the reason, acked
 * not now: a store down, a balance pay's twin in flight              REQUEUE      back to the queue after the pause
 * can never succeed: unreadable, invalid, not allowed                DEAD_LETTER  copied with the reason, then acked
 * unforeseen                                                         REQUEUE_ONCE back to the queue once, then dead-lettered
 * </pre>
 * A reply that fails is a result of its own and goes through the table again: anything but an
 * unconfirmed reply, even a reply that could not be built, falls to the rows below REPLY
 * ({@link #unanswered}), never to REPLY again. An unconfirmed reply, and settling that fails, are the
 * settlement's to handle, so that no message is left unsettled. "Once" is counted by the rule that
 * sends the command back ({@link OnceRule}), never by the broker's redelivered flag, which payonce's
 * own other requeues set too: a command that waited for a store still has its one requeue.
 *
 * <p>Row by row:
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
 * back to the queue after the pause, once, and if it is told the same when it comes back, it is
 * dead-lettered with the code as its reason, however often it waited for a store in between;</li>
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
 */
public final class OutcomeTable {

    private final Draining draining;

    public OutcomeTable(Draining draining) {
        this.draining = draining;
    }

    /** The table, row by row; {@code failure} is null for an answer. */
    public Outcome outcome(Throwable failure, IncomingRabbitMQMetadata amqp) {
        if (failure == null || isAnAnswer(kindOf(failure)) || comesBackLater(failure) && amqp.getReplyTo().isPresent()) {
            return Outcome.REPLY;
        }
        return unanswered(failure);
    }

    /** The rows below REPLY: a failure that is no answer, or a reply that failed. */
    public Outcome unanswered(Throwable failure) {
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
            return Outcome.REQUEUE_ONCE;
        }
        if (kind == ErrorCode.Kind.NOT_NOW || DependencyFailure.isTransient(failure)) {
            return Outcome.REQUEUE;
        }
        if (failure instanceof Unprocessable || kind == ErrorCode.Kind.INVALID) {
            return Outcome.DEAD_LETTER;
        }
        return Outcome.REQUEUE_ONCE;
    }

    /** The rule whose one requeue a {@link Outcome#REQUEUE_ONCE} of {@code failure} is. */
    public static OnceRule onceRuleOf(Throwable failure) {
        return comesBackLater(failure) ? OnceRule.COME_BACK_LATER : OnceRule.UNFORESEEN;
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
    public static boolean comesBackLater(Throwable failure) {
        return kindOf(failure) == ErrorCode.Kind.RETRY_LATER || failure instanceof TwinCharging;
    }
}
