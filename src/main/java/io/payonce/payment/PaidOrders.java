package io.payonce.payment;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.idempotency.Answer;
import io.payonce.metrics.RepeatDefence;
import io.payonce.order.OrderRepository;
import io.payonce.order.OrderStatus;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * What a pay finds when its order has already moved on from UNPAID, by whichever method: the
 * order's payment (a repeat, answered with it), a card payment still waiting for its processor
 * (retry later), or no payment at all (the order was closed).
 */
@ApplicationScoped
public class PaidOrders {

    private final PaymentRepository payments;
    private final OrderRepository orders;

    PaidOrders(PaymentRepository payments, OrderRepository orders) {
        this.payments = payments;
        this.orders = orders;
    }

    /**
     * Reached when the compare-and-set found the order not UNPAID, or, on the unique-index path,
     * when the order this transaction has just moved to PAID already has a live payment. The order is
     * read before its payment, each read seeing what is committed at its moment (and this
     * transaction's own writes): an order found PAID or later was committed with its payment, which
     * the second read then finds, and an order found UNPAID or PAYING with no payment had a card
     * payment declined in between. That pay is told to come back, not refused for good, since its
     * retry may well pay the order. Read the other way round, a decline and another pay committing
     * between the two reads would show no payment and a PAID order: a refusal stored under a key
     * whose pay was a repeat (model/statements.pml, -DPAYMENT_BEFORE_ORDER).
     */
    public Uni<Answer> existingPayment(SqlClient tx, long orderId, RepeatDefence caughtBy) {
        return orders.findById(tx, orderId).flatMap(order -> payments.findPayment(tx, orderId).map(payment -> {
            if (payment == null && order.status() != OrderStatus.UNPAID) {
                throw order.illegalTransitionTo(OrderStatus.PAID);
            }
            if (payment == null || !payment.phase().definite()) {
                throw new ApiException(ErrorCode.CARD_PAYMENT_PENDING);
            }
            return Answer.created(payment).repeatCaughtBy(caughtBy);
        }));
    }
}
