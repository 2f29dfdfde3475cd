package io.payonce.payment.refund;

import io.payonce.processor.ChargeOutcome;
import io.payonce.payment.operation.Verdicts;
import io.payonce.payment.refund.OperatorRefundSettlementRepository.RecordedRefund;
import io.payonce.processor.ProcessorText;
import io.payonce.processor.RefundOutcome;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Collectors;

import static io.payonce.payment.operation.Verdicts.disagrees;
import static io.payonce.payment.operation.Verdicts.idOf;
import static io.payonce.payment.operation.Verdicts.requireAnswer;

/**
 * What the processor says of an operator's settlement of a refund to the card ({@link Verdicts}),
 * and of its reversal: the refund it holds under the refund's own key and, for a settlement as
 * refunded, the refund the operator names, or, for one as not refunded, the charge the refund is of.
 */
final class RefundProcessorVerdict {

    private RefundProcessorVerdict() {
    }

    /** The processor's confirmation that the refund the operator named is {@code refund} ({@link Verdicts#succeeded}). */
    static String refunded(CardRefund refund, String processorRefundId, RefundOutcome underKey, RefundOutcome named) {
        return Verdicts.succeeded(processorRefundId, underKey, named, "by id: " + describe(named) + "; under the refund's key: " + describe(underKey),
                named instanceof RefundOutcome.Succeeded refunded && isThisRefund(refunded, refund, processorRefundId),
                "refund " + refund.id() + " is " + refund.amount() + " " + refund.currency() + " of charge " + refund.chargeId() + " for "
                        + refund.reference());
    }

    /**
     * The processor's confirmation that {@code refund} was never made: its key holds no succeeded
     * refund, and its charge ({@code charge}, looked up by id) says it was refunded exactly what
     * payonce recorded of the charge's other refunds ({@code recorded}), this one being UNKNOWN. The
     * charge's total counts every refund made of it, under any key or none, so a refund made and
     * forgotten shows there.
     *
     * <p>The operator may acknowledge, by their ids, the processor's refunds of the charge that payonce
     * did not make as it recorded them ({@code acknowledged}, as the processor describes each now): one
     * made in its dashboard, or one of payonce's that it contradicted since. Each counts as the
     * processor says, in place of payonce's record of it. One the processor contradicted and nobody
     * acknowledged refuses the settlement: the totals could agree and prove nothing (a refund failed
     * after it succeeded lowers the total by as much as this one, made, raises it). An acknowledged
     * refund must be of this charge and cannot be this refund: one under its key or for its reference
     * is, and one that names neither, of its amount, may be. A charge that does not say how much of
     * it was refunded disagrees.
     */
    static String notRefunded(CardRefund refund, RefundOutcome underKey, ChargeOutcome charge, List<RecordedRefund> recorded,
                              Map<String, RefundOutcome> acknowledged) {
        requireAnswer(underKey);
        String keyHolds = "under the refund's key: " + describe(underKey);
        if (underKey instanceof RefundOutcome.Succeeded) {
            throw disagrees(keyHolds);
        }
        List<String> ownContradictions = recorded.stream().filter(RecordedRefund::settledNow).map(RecordedRefund::contradictedBy)
                .filter(Objects::nonNull).toList();
        if (!ownContradictions.isEmpty()) {
            // The processor named an outcome of this very refund that payonce did not record: whatever it was, the
            // refund may have been made, in part or whole, and no acknowledgement can say it was not.
            throw disagrees("the processor contradicted this refund (" + String.join(", ", ownContradictions) + "): reconcile it with "
                    + "the processor, and settle it by what the processor holds");
        }
        List<String> unreconciled = recorded.stream()
                .filter(other -> !other.settledNow() && other.contradictedBy() != null && !isAcknowledged(other, acknowledged))
                .map(other -> other.contradictedBy().isEmpty() ? "one with no processor id" : other.contradictedBy()).toList();
        if (!unreconciled.isEmpty()) {
            throw disagrees("the processor contradicted " + unreconciled.size() + " of the refunds payonce recorded of charge "
                    + refund.chargeId() + " (" + String.join(", ", unreconciled) + "): acknowledge each by its processor id once "
                    + "reconciled with the processor");
        }
        if (acknowledged.keySet().stream().anyMatch(id -> ProcessorText.id(id, ProcessorText.ID_LENGTH) == null)
                && recorded.stream().anyMatch(other -> !other.settledNow() && other.succeeded() > 0 && other.processorRefundId() == null)) {
            // A refund payonce recorded as succeeded under an id it could not keep is told from no refund acknowledged
            // under such an id: it could be that very one, and would count twice.
            throw disagrees("payonce recorded a refund of charge " + refund.chargeId() + " under an id it cannot keep, which an "
                    + "acknowledged id payonce cannot keep could name: reconcile with the processor");
        }
        acknowledged.values().forEach(Verdicts::requireAnswer);
        requireAnswer(charge);
        // No such charge is a disagreement, not an outage: payonce recorded it as paid, and asking
        // again in a second will not find it (a wrong processor address answers 404 to everything).
        String said = keyHolds + "; its charge by id: " + describe(charge, refund.chargeId());
        if (!(charge instanceof ChargeOutcome.Succeeded charged) || !refund.chargeId().equals(charged.chargeId())
                || charged.amountRefunded() == null) {
            throw disagrees(said);
        }
        acknowledged.forEach((id, outcome) -> checkAcknowledged(refund, underKey, id, outcome, said));
        long expected = recorded.stream().filter(other -> !other.settledNow() && !isAcknowledged(other, acknowledged))
                .mapToLong(RecordedRefund::succeeded).sum()
                + acknowledged.values().stream().mapToLong(RefundProcessorVerdict::succeededAmount).sum();
        String counted = acknowledged.isEmpty() ? "payonce recorded" : "payonce recorded and acknowledged ("
                + acknowledged.values().stream().map(RefundProcessorVerdict::describe).collect(Collectors.joining(", ")) + ")";
        if (charged.amountRefunded() > expected) {
            throw disagrees(said + ", more than the " + expected + " " + counted + ": a refund payonce did not record was made, "
                    + "this one or another");
        }
        if (charged.amountRefunded() < expected) {
            throw disagrees(said + ", less than the " + expected + " " + counted);
        }
        return said + ", as " + counted;
    }

    /**
     * The processor's confirmation that {@code refund}, recorded as succeeded, failed since: looked up
     * by the id payonce recorded ({@code byId}), it is that very refund, failed, and whatever it
     * names of its amount, currency, charge and reference is this refund's, as every outcome is checked.
     */
    static String reversed(CardRefund refund, RefundOutcome byId) {
        requireAnswer(byId);
        String said = "by id: " + describe(byId);
        if (!(byId instanceof RefundOutcome.Failed failed) || !refund.processorRefundId().equals(failed.refundId())
                || !refund.isDescribedBy(failed.report())) {
            throw disagrees(said);
        }
        return said;
    }

    /** Whether the operator acknowledged this recorded refund: by its processor id, or by the one its contradiction named. */
    private static boolean isAcknowledged(RecordedRefund other, Map<String, RefundOutcome> acknowledged) {
        return other.processorRefundId() != null && acknowledged.containsKey(other.processorRefundId())
                || other.contradictedBy() != null && acknowledged.containsKey(other.contradictedBy());
    }

    /** An acknowledged refund is one the processor knows, of this refund's charge, and not this refund. */
    private static void checkAcknowledged(CardRefund refund, RefundOutcome underKey, String id, RefundOutcome outcome, String said) {
        String acknowledging = said + "; acknowledged " + ProcessorText.compared(id, ProcessorText.ID_LENGTH) + ": " + describe(outcome);
        if (!Objects.equals(ProcessorText.id(id, ProcessorText.ID_LENGTH), idOf(outcome)) || outcome.report() == null) {
            // Counted by what the processor returns, each once: an alias or another spelling would count one refund twice.
            // An id payonce cannot keep is kept by none of the answers either: a lookup by id answers that very id, or none.
            throw disagrees(acknowledging + ", which is not the refund of that id");
        }
        if (outcome instanceof RefundOutcome.Succeeded refunded) {
            boolean thisRefund = refund.processorKey().equals(refunded.key()) || refund.reference().equals(refunded.reference())
                    || refunded.key() == null && refunded.reference() == null && refunded.amount() == refund.amount();
            if (!refund.chargeId().equals(refunded.chargeId()) || thisRefund || id.equals(idOf(underKey))
                    || id.equals(refund.processorRefundId())) {
                throw disagrees(acknowledging + ", which is not another refund of charge " + refund.chargeId() + " than this one");
            }
        } else if (!(outcome instanceof RefundOutcome.Failed failed) || failed.chargeId() != null && !refund.chargeId().equals(failed.chargeId())
                || id.equals(idOf(underKey)) || id.equals(refund.processorRefundId())) {
            throw disagrees(acknowledging);
        }
    }

    private static long succeededAmount(RefundOutcome outcome) {
        return outcome instanceof RefundOutcome.Succeeded refunded ? refunded.amount() : 0;
    }

    /**
     * The named refund is this one: the id asked for, its amount and currency, the charge it refunded,
     * and what it says it is for, which it must say: without a reference it could be any refund of
     * that charge and amount. A refund that names the key it was made under must name this refund's.
     */
    private static boolean isThisRefund(RefundOutcome.Succeeded refunded, CardRefund refund, String processorRefundId) {
        return Objects.equals(processorRefundId, refunded.refundId()) && refund.isDescribedBy(refunded.report()) && refund.reference().equals(refunded.reference())
                && (refunded.key() == null || refunded.key().equals(refund.processorKey()));
    }

    private static String describe(RefundOutcome outcome) {
        return Verdicts.described(outcome, "refund", "failed", "charge");
    }

    /** The charge asked for by {@code chargeId}, as the processor described it, with how much of it it refunded; never an unclear answer. */
    private static String describe(ChargeOutcome outcome, String chargeId) {
        if (outcome instanceof ChargeOutcome.Succeeded charged) {
            return ProcessorText.shown(charged.chargeId()) + " succeeded, " + (charged.amountRefunded() == null ? "not saying how much of it was refunded"
                    : charged.amountRefunded() + " of " + charged.amount() + " " + charged.currency() + " refunded");
        }
        if (outcome instanceof ChargeOutcome.Declined declined) {
            return (declined.chargeId() == null ? "a charge" : declined.chargeId()) + " declined, " + declined.declineCode();
        }
        return "no charge " + chargeId;
    }
}
