package io.payonce.processor;

/**
 * What payonce learnt from the processor about one charge. Only {@link Succeeded} and
 * {@link Declined} are definite; {@link Unclear} means the card may or may not have been charged;
 * {@link Absent} means the processor holds no charge under the key, so none was made yet.
 */
public sealed interface ChargeOutcome extends ProcessorOutcome
        permits ChargeOutcome.Succeeded, ChargeOutcome.Declined, ChargeOutcome.Absent, Unclear {

    /**
     * {@code chargeId} is null when the processor's id is not one payonce can keep as it is
     * ({@link ProcessorText#id}); {@code reference} is what the charge says it is for, and
     * {@code amountRefunded} how much of it the processor has refunded in total, under any key; each
     * null when the processor does not say.
     */
    record Succeeded(String chargeId, long amount, String currency, String reference, Long amountRefunded) implements ChargeOutcome {

        @Override
        public ProcessorReport report() {
            return new ProcessorReport(true, chargeId, amount, currency, reference, null);
        }
    }

    /**
     * {@code chargeId} is null when the processor names none or one payonce cannot keep;
     * {@code amount}, {@code currency} and {@code reference} are what the declined charge says it was,
     * each null when the processor does not say: a decline frees the order, so one that names another
     * amount, currency or order is not this payment's.
     */
    record Declined(String chargeId, String declineCode, Long amount, String currency, String reference) implements ChargeOutcome {

        @Override
        public ProcessorReport report() {
            return new ProcessorReport(false, chargeId, amount, currency, reference, null);
        }

        @Override
        public String failureCode() {
            return declineCode;
        }
    }

    record Absent() implements ChargeOutcome {
    }
}
