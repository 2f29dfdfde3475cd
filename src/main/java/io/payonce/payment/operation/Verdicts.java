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

    /**
     * What an operator's settlement as succeeded writes in its audit row ({@code said}), once the
     * processor confirms it: a clear answer by the id the operator names ({@code named}), which must
     * be this operation's ({@code namedIsThisOne}; else the refusal names {@code thisOne}), and one
     * under the operation's own key ({@code underKey}), which holds nothing or that very object.
     *
     * @throws ApiException PROCESSOR_UNAVAILABLE without a clear answer, PROCESSOR_DISAGREES where it says otherwise
     */
    public static String succeeded(String claimedId, ProcessorOutcome underKey, ProcessorOutcome named, String said, boolean namedIsThisOne,
                                   String thisOne) {
        requireAnswer(underKey);
        requireAnswer(named);
        if (!namedIsThisOne) {
            throw disagrees(said + "; " + thisOne);
        }
        if (underKey.report() != null && !claimedId.equals(idOf(underKey))) {
            throw disagrees(said);
        }
        return said;
    }

    /** The processor's words as an audit row of {@code most} characters keeps them: whole, or cut short, saying so. */
    static String kept(String said, int most) {
        return said.length() > most ? said.substring(0, most - 3) + "..." : said;
    }
}
