package io.payonce.processor;

/**
 * What payonce learnt from the processor about one refund. Only {@link Succeeded} and {@link Failed}
 * are definite; {@link Unclear} means the money may or may not have gone back to the card;
 * {@link Absent} means the processor holds no refund under the key, so none was made yet.
 */
public sealed interface RefundOutcome extends ProcessorOutcome
        permits RefundOutcome.Succeeded, RefundOutcome.Failed, RefundOutcome.Absent, Unclear {

    /**
     * {@code refundId} is null when the processor's id is not one payonce can keep as it is
     * ({@link ProcessorText#id}); {@code chargeId} is the charge the processor says it refunded (null
     * also when payonce cannot keep its id, which is then no charge of payonce's), {@code reference} what the refund
     * says it is for, {@code key} the Idempotency-Key it was made under; each null when it does not say.
     */
    record Succeeded(String refundId, String chargeId, long amount, String currency, String reference, String key)
            implements RefundOutcome {

        @Override
        public ProcessorReport report() {
            return new ProcessorReport(true, refundId, amount, currency, reference, chargeId);
        }
    }

    /**
     * The processor refused the refund or it failed: nothing went back to the card. {@code chargeId},
     * {@code amount}, {@code currency} and {@code reference} are what the failed refund object names;
     * each null where a refusal of payonce's own refund request names none, since it answers that request.
     */
    record Failed(String refundId, String chargeId, Long amount, String currency, String reference, String failureCode)
            implements RefundOutcome {

        @Override
        public ProcessorReport report() {
            return new ProcessorReport(false, refundId, amount, currency, reference, chargeId);
        }
    }

    record Absent() implements RefundOutcome {
    }
}
