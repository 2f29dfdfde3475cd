package io.payonce.processor;

/**
 * What payonce keeps of the processor's words (charge ids, decline codes, statuses, the ids and keys
 * its webhook events name): the characters a processor uses for them, at the lengths the columns
 * hold, so that no answer can make the recording of an outcome fail; anything else becomes {@code _}.
 */
public final class ProcessorText {

    /** pay_record.processor_charge_id. */
    public static final int CHARGE_ID_LENGTH = 255;

    /** refund_record.processor_refund_id. */
    static final int REFUND_ID_LENGTH = 255;

    /** pay_record.decline_code, and a status quoted in a payment's history. */
    public static final int CODE_LENGTH = 64;

    private ProcessorText() {
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
