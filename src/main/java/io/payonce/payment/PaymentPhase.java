package io.payonce.payment;

/**
 * Where a payment stands. A balance payment is SUCCEEDED from its first commit; a card payment
 * advances through the lifecycle's phases ({@link io.payonce.payment.operation.Phase}), CHARGE_SENT
 * for SENT and DECLINED for FAILED.
 */
public enum PaymentPhase {
    STARTED, CHARGE_SENT, SUCCEEDED, DECLINED, UNKNOWN;

    /** Whether the outcome is known for good: the order is PAID, or back to UNPAID. */
    public boolean definite() {
        return this == SUCCEEDED || this == DECLINED;
    }
}
