package io.payonce.payment.card;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.processor.ChargeOutcome;

/**
 * What the processor says of an operator's settlement, read from its lookups: the charge it holds
 * under the payment's own key, and, for a settlement as charged, the charge the operator names. The
 * settlement goes ahead only where the processor confirms it, checked as a lookup is checked; its
 * words are kept in the audit row. A lookup without a clear answer settles nothing.
 *
 * @param said what the processor said, in words for the audit row: ids, statuses, amounts and references
 */
record ProcessorVerdict(String said) {

    /**
     * The processor's confirmation of {@code request} on {@code payment}: {@code underKey} is what it
     * holds under the payment's key, {@code named} the charge the request names (null for not charged).
     *
     * @throws ApiException PROCESSOR_UNAVAILABLE without a clear answer, PROCESSOR_DISAGREES where it says otherwise
     */
    static ProcessorVerdict of(CardPayment payment, SettlementRequest request, ChargeOutcome underKey, ChargeOutcome named) {
        requireAnswer(underKey);
        String keyHolds = "under the payment's key: " + describe(underKey);
        if (!request.charged()) {
            if (underKey instanceof ChargeOutcome.Succeeded) {
                throw disagrees(keyHolds);
            }
            return new ProcessorVerdict(keyHolds);
        }
        requireAnswer(named);
        String said = "by id: " + describe(named) + "; " + keyHolds;
        // The named charge must say what it paid for: without a reference, it could be any order's charge of that amount.
        if (!(named instanceof ChargeOutcome.Succeeded charged) || !request.chargeId().equals(charged.chargeId())
                || charged.reference() == null || !payment.isChargedBy(charged)) {
            throw disagrees(said + "; payment " + payment.id() + " is " + payment.amount() + " " + payment.currency() + " for "
                    + payment.reference());
        }
        if (!(underKey instanceof ChargeOutcome.Absent) && !request.chargeId().equals(chargeIdOf(underKey))) {
            throw disagrees(said);
        }
        return new ProcessorVerdict(said);
    }

    private static void requireAnswer(ChargeOutcome outcome) {
        if (outcome instanceof ChargeOutcome.Unknown unknown) {
            throw new ApiException(ErrorCode.PROCESSOR_UNAVAILABLE, unknown.reason());
        }
    }

    private static ApiException disagrees(String said) {
        return new ApiException(ErrorCode.PROCESSOR_DISAGREES, said);
    }

    private static String chargeIdOf(ChargeOutcome outcome) {
        if (outcome instanceof ChargeOutcome.Succeeded charged) {
            return charged.chargeId();
        }
        return outcome instanceof ChargeOutcome.Declined declined ? declined.chargeId() : null;
    }

    /** A charge as the processor described it, in the characters it was reduced to when read; never an unclear answer. */
    private static String describe(ChargeOutcome outcome) {
        if (outcome instanceof ChargeOutcome.Succeeded charged) {
            return charged.chargeId() + " succeeded, " + charged.amount() + " " + charged.currency() + " for "
                    + (charged.reference() == null ? "no reference" : charged.reference());
        }
        if (outcome instanceof ChargeOutcome.Declined declined) {
            return (declined.chargeId() == null ? "a charge" : declined.chargeId()) + " declined, " + declined.declineCode();
        }
        return "no charge";
    }
}
