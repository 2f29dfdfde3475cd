package io.payonce.processor;

/** What payonce learnt from the processor about one operation of any kind, a charge or a refund. */
public sealed interface ProcessorOutcome permits ChargeOutcome, RefundOutcome {

    /** The outcome as a definite report; null for one that is not definite. */
    default ProcessorReport report() {
        return null;
    }

    /** Whether the processor holds nothing under the key: it said neither a definite outcome nor an unclear one. */
    default boolean absent() {
        return report() == null && unclear() == null;
    }

    /** Why a definite failure made nothing, in the processor's words (a decline code); null for any other outcome. */
    default String failureCode() {
        return null;
    }

    /** False only for an unclear outcome of a request that certainly never reached the processor. */
    default boolean delivered() {
        return true;
    }

    /** Why the processor left the outcome unclear, for one it did; null otherwise. */
    default String unclear() {
        return null;
    }
}
