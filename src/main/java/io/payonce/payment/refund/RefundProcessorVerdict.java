package io.payonce.payment.refund;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.processor.RefundOutcome;

/**
 * What the processor says of an operator's settlement of a refund to the card, read from its lookups:
 * the refund it holds under the refund's own key and, for a settlement as refunded, the refund the
 * operator names. The settlement goes ahead only where the processor confirms it, checked as a lookup
 * is checked; its words are kept in the audit row. A lookup without a clear answer settles nothing.
 *
 * @param said what the processor said, in words for the audit row: ids, statuses, amounts, charges and references
 */
record RefundProcessorVerdict(String said) {

    /**
     * The processor's confirmation of {@code request} on {@code refund}: {@code underKey} is what it
     * holds under the refund's key, {@code named} the refund the request names (null for not refunded).
     *
     * @throws ApiException PROCESSOR_UNAVAILABLE without a clear answer, PROCESSOR_DISAGREES where it says otherwise
     */
    static RefundProcessorVerdict of(CardRefund refund, RefundSettlementRequest request, RefundOutcome underKey, RefundOutcome named) {
        requireAnswer(underKey);
        String keyHolds = "under the refund's key: " + describe(underKey);
        if (!request.refunded()) {
            if (underKey instanceof RefundOutcome.Succeeded) {
                throw disagrees(keyHolds);
            }
            return new RefundProcessorVerdict(keyHolds);
        }
        requireAnswer(named);
        String said = "by id: " + describe(named) + "; " + keyHolds;
        if (!(named instanceof RefundOutcome.Succeeded refunded) || !isThisRefund(refunded, refund, request.processorRefundId())) {
            throw disagrees(said + "; refund " + refund.id() + " is " + refund.amount() + " " + refund.currency() + " of charge "
                    + refund.chargeId() + " for " + refund.reference());
        }
        if (!(underKey instanceof RefundOutcome.Absent) && !request.processorRefundId().equals(refundIdOf(underKey))) {
            throw disagrees(said);
        }
        return new RefundProcessorVerdict(said);
    }

    /**
     * The named refund is this one: the id asked for, its amount and currency, the charge it refunded,
     * and what it says it is for, which it must say: without a reference it could be any refund of
     * that charge and amount. A refund that names the key it was made under must name this refund's.
     */
    private static boolean isThisRefund(RefundOutcome.Succeeded refunded, CardRefund refund, String processorRefundId) {
        return processorRefundId.equals(refunded.refundId()) && refund.isRefundedBy(refunded) && refund.reference().equals(refunded.reference())
                && (refunded.key() == null || refunded.key().equals(refund.processorKey()));
    }

    private static void requireAnswer(RefundOutcome outcome) {
        if (outcome instanceof RefundOutcome.Unknown unknown) {
            throw new ApiException(ErrorCode.PROCESSOR_UNAVAILABLE, unknown.reason());
        }
    }

    private static ApiException disagrees(String said) {
        return new ApiException(ErrorCode.PROCESSOR_DISAGREES, said);
    }

    private static String refundIdOf(RefundOutcome outcome) {
        if (outcome instanceof RefundOutcome.Succeeded refunded) {
            return refunded.refundId();
        }
        return outcome instanceof RefundOutcome.Failed failed ? failed.refundId() : null;
    }

    /** A refund as the processor described it, in the characters it was reduced to when read; never an unclear answer. */
    private static String describe(RefundOutcome outcome) {
        if (outcome instanceof RefundOutcome.Succeeded refunded) {
            return refunded.refundId() + " succeeded, " + refunded.amount() + " " + refunded.currency() + " of charge "
                    + (refunded.chargeId() == null ? "not named" : refunded.chargeId()) + " for "
                    + (refunded.reference() == null ? "no reference" : refunded.reference());
        }
        if (outcome instanceof RefundOutcome.Failed failed) {
            return (failed.refundId() == null ? "a refund" : failed.refundId()) + " failed, " + failed.failureCode();
        }
        return "no refund";
    }
}
