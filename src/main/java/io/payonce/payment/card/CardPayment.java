package io.payonce.payment.card;

import io.payonce.idempotency.IdempotencyKey;
import io.payonce.payment.PaymentMethod;
import io.payonce.payment.PaymentPhase;
import io.payonce.payment.PaymentView;

import java.time.Duration;

/**
 * A card payment as stored: the order it pays, whose key began it, the card token to charge, the
 * charge's own key at the processor, the phase it has reached, and how long ago its charge was
 * first sent (null while it never was).
 */
record CardPayment(long id, long orderId, String userId, long amount, String currency, PaymentPhase phase, IdempotencyKey key,
                   String cardToken, String processorKey, Duration sinceFirstSent) {

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

    CardPayment in(PaymentPhase next) {
        return new CardPayment(id, orderId, userId, amount, currency, next, key, cardToken, processorKey, sinceFirstSent);
    }
}
