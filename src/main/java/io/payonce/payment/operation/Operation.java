package io.payonce.payment.operation;

import io.payonce.idempotency.IdempotencyKey;
import io.payonce.processor.ProcessorReport;

import java.time.Duration;

/**
 * One operation at the processor (a card charge, a refund to the card) as the worker that holds it
 * sees it: its row's id, the phase it has reached, its own key at the processor, how long ago a send
 * that may have reached the processor first went out (null while none did), and its attempts as this
 * worker last read or moved them. Every lease taken and every send counts one, so the attempts are
 * the worker's fencing token: a write fenced by them is not made once another worker has taken over.
 * What the processor says of it is checked here, once for every kind ({@link #isDescribedBy}).
 */
public interface Operation<O extends Operation<O>> {

    long id();

    /** The order it pays or refunds, and its buyer. */
    long orderId();

    String userId();

    /** Whose key began it: the scope and the key its answer is stored under. */
    String scope();

    IdempotencyKey key();

    Phase lifecyclePhase();

    /** {@code phase} in the kind's own stored words (a card payment's FAILED is DECLINED). */
    String phaseNamed(Phase phase);

    String processorKey();

    /** In minor units. */
    long amount();

    String currency();

    /** What the operation tells the processor it is for, in words a person at its dashboard can trace. */
    String reference();

    /** The processor's object the operation acts on, which its success must name (a refund's charge); null when none (a charge). */
    default String actsOn() {
        return null;
    }

    /** The processor's id recorded as the operation's own with its outcome; null before, or where it had none payonce could keep. */
    String processorId();

    Duration sinceFirstSent();

    int attempts();

    /** The operation as it reads once moved to {@code phase}. */
    O at(Phase phase);

    /** The operation once this worker's fenced write counted one more attempt (a lease taken, a resend marked). */
    O nextAttempt();

    /** The operation once this worker's first send was marked: SENT, one more attempt. */
    default O sent() {
        return at(Phase.SENT).nextAttempt();
    }

    /**
     * The one set of checks of what the processor says of this operation, for a success and a
     * failure alike: whatever {@code said} names of the amount, the currency (processors write it in
     * either case), the reference, the object acted on and its own id agrees with this operation. A
     * success must name its amount, its currency, the object it acted on, and, once an id is
     * recorded, that id: under a settled operation's key, another id is a second operation (the
     * processor forgot the key and took a resend as new). A failure frees the order's money as a
     * success takes it, so one of another amount, order or charge under this key must not; a refusal
     * of payonce's own request names none of them, and answers that request. An outcome that is not
     * definite (null) names nothing to disagree with.
     */
    default boolean isDescribedBy(ProcessorReport said) {
        if (said == null) {
            return true;
        }
        if (said.succeeded() && (said.amount() == null || said.currency() == null || actsOn() != null && said.actsOn() == null
                || processorId() != null && said.id() == null)) {
            return false;
        }
        return agrees(said.amount(), amount()) && (said.currency() == null || currency().equalsIgnoreCase(said.currency()))
                && agrees(said.reference(), reference()) && agrees(said.actsOn(), actsOn())
                && (said.id() == null || processorId() == null || said.id().equals(processorId()));
    }

    /**
     * Whether a settled operation already has the outcome {@code said} tells: the same phase, described
     * as above, and a success by the very id recorded (another processor object under the key that
     * succeeded is a second charge or refund). A success whose id payonce could not keep is told from
     * no other, so it never repeats one: ops look at it. A repeat of its outcome is this; anything else
     * contradicts it.
     */
    default boolean isSettledAs(ProcessorReport said) {
        return lifecyclePhase() == (said.succeeded() ? Phase.SUCCEEDED : Phase.FAILED) && isDescribedBy(said)
                && (!said.succeeded() || said.id() != null && said.id().equals(processorId()));
    }

    private static boolean agrees(Object said, Object own) {
        return said == null || said.equals(own);
    }
}
