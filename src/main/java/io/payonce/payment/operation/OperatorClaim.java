package io.payonce.payment.operation;

import io.payonce.processor.ProcessorText;

import java.util.Locale;

/**
 * What an operator says became of an operation the processor cannot account for, as an operator's
 * settlement ({@link OperatorSettlements}) reads it from the kind's request body.
 */
public interface OperatorClaim {

    /** The operation succeeded at the processor, by the object {@link #processorId} names; else nothing was made. */
    boolean succeeded();

    /** The processor's object the operator names, as they wrote it, for a success; null for a settlement as failed. */
    String namedId();

    /** The processor's object the operation made, as payonce records it: exactly as named, or none where payonce cannot keep it. */
    default String processorId() {
        return ProcessorText.id(namedId(), ProcessorText.ID_LENGTH);
    }

    /** The object named, as the audit row and the answer keep it: exactly, or marked as an id payonce cannot keep. */
    default String processorIdShown() {
        return ProcessorText.compared(namedId(), ProcessorText.ID_LENGTH);
    }

    /** What the operator says became of the operation, in the kind's words. */
    Enum<?> outcome();

    /** The outcome as the request, the audit row and the event write it ("charged", "not_refunded"). */
    default String outcomeText() {
        return outcome().name().toLowerCase(Locale.ROOT);
    }

    String reason();
}
