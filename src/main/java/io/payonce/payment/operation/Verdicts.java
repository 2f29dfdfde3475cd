package io.payonce.payment.operation;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.processor.ProcessorOutcome;
import io.payonce.processor.ProcessorReport;
import io.payonce.processor.ProcessorText;

/**
 * What an operator's settlement of any kind says when the processor's answers do not let it through.
 * A settlement goes ahead only where the processor confirms it, checked as a lookup is checked, and
 * what it said is kept in the audit row: PROCESSOR_UNAVAILABLE without a clear answer (asking again
 * may settle it), PROCESSOR_DISAGREES where it says otherwise. An empty key proves nothing alone (the
 * processor forgets keys, and a wrong address answers 404 too): a settlement as failed needs a second proof.
 */
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
     * under the operation's own key ({@code underKey}), which holds nothing or that very object, as
     * payonce keeps its id ({@code claimedId}; null where payonce cannot keep it, and then nothing).
     */
    public static String succeeded(String claimedId, ProcessorOutcome underKey, ProcessorOutcome named, String said, boolean namedIsThisOne,
                                   String thisOne) {
        requireAnswer(underKey);
        requireAnswer(named);
        if (!namedIsThisOne) {
            throw disagrees(said + "; " + thisOne);
        }
        if (underKey.report() != null && (claimedId == null || !claimedId.equals(idOf(underKey)))) {
            throw disagrees(said);
        }
        return said;
    }

    /** The processor's words as an audit row of {@code most} characters keeps them: whole, or cut short, saying so. */
    public static String kept(String said, int most) {
        return said.length() > most ? said.substring(0, most - 3) + "..." : said;
    }

    /**
     * One object as the processor described it and payonce read it, in words for the audit row: its
     * id, whether it succeeded or failed ({@code failed}: the kind's word, "declined") and why, and
     * whatever it named of its amount, currency, the object it acted on ({@code actsOn}: what that
     * is, "charge") and its reference; an answer the processor left unclear as such; none as "no charge".
     */
    public static String described(ProcessorOutcome outcome, String made, String failed, String actsOn) {
        ProcessorReport said = outcome.report();
        if (said == null) {
            return outcome.unclear() != null ? "a " + made + " not yet settled (" + outcome.unclear() + ")" : "no " + made;
        }
        String what = said.succeeded() ? ProcessorText.shown(said.id()) + " succeeded"
                : (said.id() == null ? "a " + made : said.id()) + " " + failed + ", " + outcome.failureCode();
        return what + (said.amount() == null ? "" : ", " + said.amount() + (said.currency() == null ? "" : " " + said.currency()))
                + (said.actsOn() == null ? "" : " of " + actsOn + " " + said.actsOn())
                + (said.reference() != null ? " for " + said.reference() : said.succeeded() ? " for no reference" : "");
    }
}
