package io.payonce.account;

/** What moved money, as recorded in {@code account_entry.ref_type}. */
public enum EntryType {
    PAYMENT, REFUND, DEPOSIT
}
