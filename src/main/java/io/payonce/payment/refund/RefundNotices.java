package io.payonce.payment.refund;

import io.payonce.order.OrderRepository;
import io.payonce.payment.operation.Notice;
import io.payonce.processor.RefundOutcome;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * The refund room's door for a refund's outcome that payonce learns from outside its own calls: the
 * processor's webhook events. The refund to the card is found by the key it was made under at the
 * processor, judged as every operation is ({@link Notice#of}), and settled through
 * {@link RefundToCard}, as if a lookup had returned the outcome: the same compare-and-set on
 * its phase, the same order, event and key's answer (a failed refund gives its reservation back).
 */
@ApplicationScoped
public class RefundNotices {

    private final CardRefundRepository cardRefunds;
    private final OrderRepository orders;
    private final RefundToCard settlement;

    RefundNotices(CardRefundRepository cardRefunds, OrderRepository orders, RefundToCard settlement) {
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
    public Uni<Notice> apply(SqlConnection tx, String processorKey, RefundOutcome outcome, String eventId) {
        if (outcome.report() == null) {
            throw new IllegalArgumentException("Only a definite outcome settles a refund: " + outcome);
        }
        return cardRefunds.findByProcessorKey(tx, processorKey).flatMap(found -> found == null
                ? Notice.of(null, outcome.report(), Uni.createFrom()::nullItem)
                : orders.lockById(tx, found.orderId()).flatMap(order -> cardRefunds.lockByProcessorKey(tx, processorKey)
                        .flatMap(refund -> Notice.of(refund, outcome.report(), () -> settlement.record(tx, refund, order, outcome, eventId)))));
    }
}
