package io.payonce.payment.card;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.idempotency.IdempotencyKey;
import io.payonce.payment.PaymentMethod;
import io.payonce.payment.PaymentPhase;
import io.payonce.payment.PaymentView;
import io.payonce.payment.operation.Operation;
import io.payonce.payment.operation.Phase;

import java.time.Duration;
import java.util.Map;

/**
 * A card payment as a worker holds it ({@link Operation}): the card token to charge, and the charge
 * recorded as its own once its outcome is known; its attempts are charge_attempts.
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

    @Override
    public String phaseNamed(Phase lifecycle) {
        return switch (lifecycle) {
            case STARTED -> PaymentPhase.STARTED.name();
            case SENT -> PaymentPhase.CHARGE_SENT.name();
            case UNKNOWN -> PaymentPhase.UNKNOWN.name();
            case SUCCEEDED -> PaymentPhase.SUCCEEDED.name();
            case FAILED -> PaymentPhase.DECLINED.name();
        };
    }

    /** A card payment's key is its user's. */
    @Override
    public String scope() {
        return userId;
    }

    @Override
    public CardPayment at(Phase lifecycle) {
        return in(PaymentPhase.valueOf(phaseNamed(lifecycle)));
    }

    /** What the charge tells the processor it is for; a charge that answers with another is not this payment's. */
    @Override
    public String reference() {
        return "order-" + orderId;
    }

    /** The payment as its pay request is answered. */
    PaymentView view() {
        return new PaymentView(id, orderId, amount, currency, PaymentMethod.CARD, phase);
    }

    /** The charge recorded as the payment's own. */
    @Override
    public String processorId() {
        return chargeId;
    }

    CardPayment in(PaymentPhase next) {
        return new CardPayment(id, orderId, userId, amount, currency, next, key, cardToken, processorKey, chargeId, sinceFirstSent, attempts);
    }

    @Override
    public CardPayment nextAttempt() {
        return new CardPayment(id, orderId, userId, amount, currency, phase, key, cardToken, processorKey, chargeId, sinceFirstSent, attempts + 1);
    }

    /** The 402 that the key of payment {@code paymentId}, declined {@code declineCode}, answers, whoever learnt of the decline. */
    static ApiException declined(long paymentId, String declineCode) {
        return new ApiException(ErrorCode.CARD_DECLINED, Map.of("paymentId", paymentId, "declineCode", declineCode), declineCode);
    }
}
