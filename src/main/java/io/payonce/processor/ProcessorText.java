package io.payonce.processor;

import java.util.regex.Pattern;

/**
 * What payonce keeps of the processor's words, at the lengths the columns hold, so that no answer
 * can make the recording of an outcome fail. Words payonce only shows or compares with its own
 * (decline codes, statuses, currencies, references, what a webhook event names) are reduced to the
 * characters a processor uses for them. An id payonce names again (a charge's, to refund it or look
 * it up; a refund's) is kept exactly as the processor wrote it, or not at all.
 */
public final class ProcessorText {

    /** An id column of the processor's objects: pay_record.processor_charge_id, refund_record.processor_refund_id. */
    public static final int ID_LENGTH = 255;

    /** pay_record.decline_code, and a status quoted in a payment's history. */
    public static final int CODE_LENGTH = 64;

    private ProcessorText() {
    }

    /** What an id payonce keeps is made of: the characters an operator names one in ({@code Identifiers.NAMED_PROCESSOR_ID}), never {@code .} or {@code ..}. */
    private static final Pattern KEEPABLE = Pattern.compile("(?!\\.{1,2}$)[A-Za-z0-9._:-]+");

    /** Marks a compared text payonce could not keep exactly: no text of payonce's own begins with it. */
    private static final String NOT_KEPT = "?";

    /**
     * The processor's id exactly as it wrote it, or null when it names none or one payonce cannot keep
     * as it is (over {@code max} characters, or any other character than A-Z a-z 0-9 . _ : -). Reduced,
     * two ids could become one ({@code ch/zz} and {@code ch_zz}), and a refund or a lookup by the kept
     * id would reach another buyer's charge.
     */
    public static String id(String text, int max) {
        return text != null && text.length() <= max && KEEPABLE.matcher(text).matches() ? text : null;
    }

    /**
     * A text the processor echoes back for payonce to compare with its own (a reference, a key): exactly
     * as written, or, when payonce cannot keep it so, reduced behind a leading {@code ?}, which none of
     * payonce's own texts has. Reduced alone, {@code order-1-refund-r/1} would equal refund
     * {@code r_1}'s reference; marked, it equals nothing payonce sent. Null stays null.
     */
    public static String compared(String text, int max) {
        String kept = id(text, max);
        return kept != null || text == null || text.isEmpty() ? kept : NOT_KEPT + of(text, max - NOT_KEPT.length());
    }

    /** An id kept by {@link #id}, in words for a history or an audit row: null is one payonce could not keep. */
    public static String shown(String id) {
        return id != null ? id : "(an id payonce cannot keep)";
    }

    /** {@code text} cut to {@code max} characters of A-Z a-z 0-9 . _ : -; null stays null, and so does an empty text. */
    public static String of(String text, int max) {
        if (text == null || text.isEmpty()) {
            return null;
        }
        String bounded = text.length() > max ? text.substring(0, max) : text;
        return bounded.replaceAll("[^A-Za-z0-9._:-]", "_");
    }
}
