package io.payonce.payment.refund;

import io.payonce.order.Order;
import io.payonce.order.OrderRepository;
import io.payonce.payment.operation.ProcessorIdTaken;
import io.payonce.processor.RefundOutcome;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * The refund room's door for a refund's outcome that payonce learns from outside its own calls: the
 * processor's webhook events. The refund to the card is found by the key it was made under at the
 * processor, and a definite outcome settles it through {@link CardRefundSettlement}, as if a lookup
 * had returned it: the same checks of amount, currency and charge, the same compare-and-set on its
 * phase, the same order, event and key's answer (a failed refund gives its reservation back). A
 * refund that has an outcome already keeps it, whatever the notice says; a key no refund was made
 * under creates nothing. A refund of another amount, currency or charge under the refund's key
 * settles nothing and moves nothing either: the notice holds no lease on the refund, so it leaves
 * marking it UNKNOWN to the worker or the recovery job whose own lookup will meet the same refund. So
 * does a processor refund that another refund has recorded already: the event contradicts, and
 * is kept for ops, never a failure the processor would deliver again for days.
 */
@ApplicationScoped
public class RefundNotices {

    private final CardRefundRepository cardRefunds;
    private final OrderRepository orders;
    private final CardRefundSettlement settlement;

    RefundNotices(CardRefundRepository cardRefunds, OrderRepository orders, CardRefundSettlement settlement) {
        this.cardRefunds = cardRefunds;
        this.orders = orders;
        this.settlement = settlement;
    }

    /**
     * Applies {@code outcome} (definite: succeeded or failed) of the refund made under
     * {@code processorKey}, in {@code tx}, which the caller commits with whatever else it records;
     * {@code eventId} is written on the phase it moves the refund into. The refund's order is locked
     * first, then the refund, as every definite outcome of a refund takes them; both stay locked until
     * {@code tx} ends, so nothing settles the refund between what this finds and what it records.
     */
    public Uni<RefundNotice> apply(SqlConnection tx, String processorKey, RefundOutcome outcome, String eventId) {
        if (!(outcome instanceof RefundOutcome.Succeeded) && !(outcome instanceof RefundOutcome.Failed)) {
            throw new IllegalArgumentException("Only a definite outcome settles a refund: " + outcome);
        }
        return cardRefunds.findByProcessorKey(tx, processorKey).flatMap(found -> found == null
                ? Uni.createFrom().item(RefundNotice.unknownRefund())
                : orders.lockById(tx, found.orderId()).flatMap(order -> cardRefunds.lockByProcessorKey(tx, processorKey)
                        .flatMap(refund -> judge(tx, refund, order, outcome, eventId))));
    }

    private Uni<RefundNotice> judge(SqlConnection tx, CardRefund refund, Order order, RefundOutcome outcome, String eventId) {
        if (refund.phase().definite()) {
            RefundNotice.Effect effect = refund.isSettledAs(outcome.report()) ? RefundNotice.Effect.ALREADY_SETTLED
                    : RefundNotice.Effect.CONTRADICTING;
            return Uni.createFrom().item(new RefundNotice(refund.id(), refund.phase(), effect));
        }
        if (!refund.isDescribedBy(outcome.report())) {
            return Uni.createFrom().item(new RefundNotice(refund.id(), refund.phase(), RefundNotice.Effect.CONTRADICTING));
        }
        return settlement.record(tx, refund, order, outcome, eventId).map(answer -> {
            if (answer == null) {
                throw new IllegalStateException("Refund " + refund.id() + " was unsettled under its locks, yet its phase did not move");
            }
            return new RefundNotice(refund.id(), phaseOf(outcome), RefundNotice.Effect.APPLIED);
        }).onFailure(ProcessorIdTaken.class)
                .recoverWithItem(new RefundNotice(refund.id(), refund.phase(), RefundNotice.Effect.CONTRADICTING));
    }

    private static RefundPhase phaseOf(RefundOutcome outcome) {
        return outcome instanceof RefundOutcome.Succeeded ? RefundPhase.SUCCEEDED : RefundPhase.FAILED;
    }
}
