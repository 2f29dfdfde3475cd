package io.payonce.payment.refund;

/**
 * What a refund's outcome, learnt from outside payonce's own calls, did to the refund to the card it
 * names: {@code refundId} and {@code phase} (where the refund stands now) are null when no refund was
 * made under its key.
 */
public record RefundNotice(Long refundId, RefundPhase phase, Effect effect) {

    public enum Effect {
        /** It settled the refund, which had no outcome yet. */
        APPLIED,
        /** The refund had that outcome already: nothing changed. */
        ALREADY_SETTLED,
        /**
         * It says otherwise than the refund's recorded outcome, or names another amount, currency or charge, or a processor
         * refund another refund recorded: nothing changed.
         */
        CONTRADICTING,
        /** No refund to the card was made under its key: nothing was created. */
        UNKNOWN_REFUND
    }

    static RefundNotice unknownRefund() {
        return new RefundNotice(null, null, Effect.UNKNOWN_REFUND);
    }
}
