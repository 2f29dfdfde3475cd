package io.payonce.payment.operation;

/**
 * What an operator says became of an operation the processor cannot account for: made ({@link #made}),
 * by the processor's object the claim names ({@link #processorId}), or not made at all; and why they
 * say so. The body of a settlement request; its fields keep each kind's wire words.
 */
public interface OperatorClaim {

    /** True: the processor made it (charged, refunded); false: it made nothing. */
    boolean made();

    /** The processor's object that made it: null when not made. */
    String processorId();

    /** The operator's words, kept in the audit row. */
    String reason();

    /** The outcome as the audit row and the event write it, in the kind's words. */
    String outcomeText();
}
