package io.payonce.payment.refund;

/**
 * Where a refund stands. A refund of a balance payment is SUCCEEDED from its first commit; a refund
 * to the card advances through the lifecycle's phases ({@link io.payonce.payment.operation.Phase}),
 * in the same words.
 */
public enum RefundPhase {
    STARTED, SENT, SUCCEEDED, FAILED, UNKNOWN
}
