package io.payonce.processor;

/**
 * What the processor says of one operation it settled, a charge or a refund, in the fields that
 * one set of checks reads against the operation: whether it succeeded, its id as payonce keeps it
 * ({@link ProcessorText#id}), its amount, currency and reference, and the object it acted on (a
 * refund's charge); each null where the processor says nothing.
 */
public record ProcessorReport(boolean succeeded, String id, Long amount, String currency, String reference, String actsOn) {
}
