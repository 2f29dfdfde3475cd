package io.payonce.payment;

/**
 * Where a payment stands. A balance payment is SUCCEEDED from its first commit. A card payment
 * advances through committed recovery points: STARTED (the order is PAYING, nothing sent yet),
 * CHARGE_SENT (a charge may have reached the processor), then a definite SUCCEEDED or DECLINED, or
 * UNKNOWN when the processor's answer was lost, until the recovery job learns the outcome.
 */
public enum PaymentPhase {
    STARTED, CHARGE_SENT, SUCCEEDED, DECLINED, UNKNOWN;

    /** Whether the outcome is known for good: the order is PAID, or back to UNPAID. */
    public boolean definite() {
        return this == SUCCEEDED || this == DECLINED;
    }
}
