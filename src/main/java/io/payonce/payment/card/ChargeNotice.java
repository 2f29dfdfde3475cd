package io.payonce.payment.card;

import io.payonce.payment.PaymentPhase;

/**
 * What a charge's outcome, learnt from outside payonce's own calls, did to the card payment it
 * names: {@code paymentId} and {@code phase} (where the payment stands now) are null when no payment
 * was made under its key.
 */
public record ChargeNotice(Long paymentId, PaymentPhase phase, Effect effect) {

    public enum Effect {
        /** It settled the payment, which had no outcome yet. */
        APPLIED,
        /** The payment had that outcome already: nothing changed. */
        ALREADY_SETTLED,
        /**
         * It says otherwise than the payment's recorded outcome, or names another amount, currency or order, or a charge
         * another payment recorded: nothing changed.
         */
        CONTRADICTING,
        /** No card payment was made under its key: nothing was created. */
        UNKNOWN_CHARGE
    }

    static ChargeNotice unknownCharge() {
        return new ChargeNotice(null, null, Effect.UNKNOWN_CHARGE);
    }
}
