package io.payonce.payment.operation;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.processor.ProcessorOutcome;

/** What an operator's settlement of any kind says when the processor's answers do not let it through. */
public final class Verdicts {

    private Verdicts() {
    }

    /** @throws ApiException PROCESSOR_UNAVAILABLE when the processor left {@code outcome} unclear: asking again may settle it */
    public static void requireAnswer(ProcessorOutcome outcome) {
        if (outcome.unclear() != null) {
            throw new ApiException(ErrorCode.PROCESSOR_UNAVAILABLE, outcome.unclear());
        }
    }

    /** PROCESSOR_DISAGREES, with what the processor {@code said}, in words for the audit row. */
    public static ApiException disagrees(String said) {
        return new ApiException(ErrorCode.PROCESSOR_DISAGREES, said);
    }

    /** The processor's id of a definite {@code outcome}; null for one that is not, or names none payonce can keep. */
    public static String idOf(ProcessorOutcome outcome) {
        return outcome.report() == null ? null : outcome.report().id();
    }
}
