package io.payonce.account;

/** What moved money, as recorded in {@code account_entry.ref_type}. */
public enum EntryType {
    PAYMENT, REFUND, DEPOSIT;

    /**
     * How a payment's or a refund's ledger line names its record ({@code account_entry.ref_id}): the
     * record's id as text. A deposit's line carries the settlement reference its request names.
     */
    public static String referenceOf(long recordId) {
        return Long.toString(recordId);
    }
}
