package io.payonce.payment.card;

import io.payonce.idempotency.IdempotencyKey;
import io.payonce.payment.PaymentMethod;
import io.payonce.payment.PaymentPhase;
import io.payonce.payment.PaymentView;
import io.payonce.payment.operation.Operation;
import io.payonce.payment.operation.Phase;
import io.payonce.processor.ChargeOutcome;

import java.time.Duration;

/**
 * A card payment as a worker holds it: the order it pays, whose key began it, the card token to
 * charge, the charge's own key at the processor and the charge recorded as its own once its outcome
 * is known (null before, or where the processor named none), the phase it has reached, how long ago its charge
 * was first sent (null while no send has reached the processor), and its attempts: charge_attempts
 * as this worker last read or moved it. Every lease taken and every send counts one, so the
 * attempts are the worker's fencing token: a write fenced by them finds them changed, and is not
 * made, once another worker has taken the payment over.
 */
record CardPayment(long id, long orderId, String userId, long amount, String currency, PaymentPhase phase, IdempotencyKey key,
                   String cardToken, String processorKey, String chargeId, Duration sinceFirstSent, int attempts)
        implements Operation<CardPayment> {

    /** A card payment's phases in the lifecycle's words: CHARGE_SENT is SENT, DECLINED is FAILED. */
    @Override
    public Phase lifecyclePhase() {
        return switch (phase) {
            case STARTED -> Phase.STARTED;
            case CHARGE_SENT -> Phase.SENT;
            case UNKNOWN -> Phase.UNKNOWN;
            case SUCCEEDED -> Phase.SUCCEEDED;
            case DECLINED -> Phase.FAILED;
        };
    }

    /** Where the client finds the payment: the Location of its 202. */
    String location() {
        return PaymentView.location(id);
    }

    /** The path a recorded problem names as its instance, whoever settles the payment. */
    String payPath() {
        return "/orders/" + orderId + "/pay";
    }

    /** What the charge tells the processor it is for; a charge that answers with another is not this payment's. */
    String reference() {
        return "order-" + orderId;
    }

    /** The payment as its pay request is answered. */
    PaymentView view() {
        return new PaymentView(id, orderId, amount, currency, PaymentMethod.CARD, phase);
    }

    /**
     * The charge is this payment's: its amount, its currency (processors write it in either case),
     * and its order, where the processor echoes what the charge was for; and the very charge recorded,
     * once one is.
     */
    boolean isChargedBy(ChargeOutcome.Succeeded charged) {
        return isRecorded(charged.chargeId()) && charged.amount() == amount && currency.equalsIgnoreCase(charged.currency())
                && (charged.reference() == null || charged.reference().equals(reference()));
    }

    /**
     * The processor's declined charge is this payment's: whatever it names of the amount, the
     * currency and the order agrees. A decline frees the order for another pay, so a decline of
     * another charge under this payment's key must not. A refusal of payonce's own request names none
     * of them, and answers that request.
     */
    boolean isDeclinedBy(ChargeOutcome.Declined declined) {
        return (declined.chargeId() == null || isRecorded(declined.chargeId()))
                && (declined.amount() == null || declined.amount() == amount)
                && (declined.currency() == null || currency.equalsIgnoreCase(declined.currency()))
                && (declined.reference() == null || declined.reference().equals(reference()));
    }

    /**
     * Whether {@code outcome} describes this payment's charge ({@link #isChargedBy}, {@link #isDeclinedBy});
     * an outcome that is not definite names no charge to disagree with.
     */
    boolean isDescribedBy(ChargeOutcome outcome) {
        if (outcome instanceof ChargeOutcome.Succeeded charged) {
            return isChargedBy(charged);
        }
        return !(outcome instanceof ChargeOutcome.Declined declined) || isDeclinedBy(declined);
    }

    /**
     * The charge id agrees with the one recorded, if one is: under a settled payment's key, another
     * charge, even of the same amount and order, is a second charge of the card (the processor forgot
     * the key and took a resend as new).
     */
    private boolean isRecorded(String id) {
        return chargeId == null || chargeId.equals(id);
    }

    CardPayment in(PaymentPhase next) {
        return new CardPayment(id, orderId, userId, amount, currency, next, key, cardToken, processorKey, chargeId, sinceFirstSent, attempts);
    }

    @Override
    public CardPayment sent() {
        return in(PaymentPhase.CHARGE_SENT).nextAttempt();
    }

    @Override
    public CardPayment nextAttempt() {
        return new CardPayment(id, orderId, userId, amount, currency, phase, key, cardToken, processorKey, chargeId, sinceFirstSent, attempts + 1);
    }
}
