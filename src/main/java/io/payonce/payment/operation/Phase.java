package io.payonce.payment.operation;

/**
 * Where an operation at the processor stands, in the lifecycle's words; each kind keeps its own
 * stored and wire words ({@code PaymentPhase}). STARTED: committed, nothing sent yet. SENT: a send
 * may have reached the processor, so no one assumes it did not. UNKNOWN: the processor's answer was
 * lost or unclear, and the recovery job asks again. SUCCEEDED and FAILED are definite.
 */
public enum Phase {
    STARTED, SENT, UNKNOWN, SUCCEEDED, FAILED;

    /** Whether the outcome is known for good. */
    public boolean definite() {
        return this == SUCCEEDED || this == FAILED;
    }
}
