package io.payonce.payment.refund;

/**
 * Where a refund stands. A refund of a balance payment is SUCCEEDED from its first commit. A refund
 * to the card advances through committed recovery points: STARTED (its amount reserved on the order,
 * nothing sent yet), SENT (the refund may have reached the processor), then a definite SUCCEEDED or
 * FAILED, or UNKNOWN when the processor's answer was lost, until the recovery job learns the outcome.
 */
public enum RefundPhase {
    STARTED, SENT, SUCCEEDED, FAILED, UNKNOWN;

    /** Whether the outcome is known for good: the money went back to the card, or certainly did not. */
    public boolean definite() {
        return this == SUCCEEDED || this == FAILED;
    }
}
