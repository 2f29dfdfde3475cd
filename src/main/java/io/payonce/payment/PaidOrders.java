package io.payonce.payment;

import io.payonce.api.ApiException;
import io.payonce.api.ErrorCode;
import io.payonce.idempotency.Answer;
import io.payonce.metrics.DuplicateLayer;
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
class PaidOrders {

    private final PaymentRepository payments;
    private final OrderRepository orders;

    PaidOrders(PaymentRepository payments, OrderRepository orders) {
        this.payments = payments;
        this.orders = orders;
    }

    /**
     * Reached when the order was not UNPAID a moment ago. With no payment and the order UNPAID now,
     * a card payment was declined in between (PAYING, then UNPAID again): the pay is told to come
     * back, not refused for good, since its retry may well pay the order.
     */
    Uni<Answer> existingPayment(SqlClient tx, long orderId, DuplicateLayer caughtBy) {
        return payments.findPayment(tx, orderId).flatMap(payment -> {
            if (payment == null) {
                return orders.findById(tx, orderId).map(current -> {
                    if (current.status() == OrderStatus.UNPAID) {
                        throw new ApiException(ErrorCode.CARD_PAYMENT_PENDING);
                    }
                    throw current.illegalTransitionTo(OrderStatus.PAID);
                });
            }
            if (!payment.phase().definite()) {
                return Uni.createFrom().failure(new ApiException(ErrorCode.CARD_PAYMENT_PENDING));
            }
            return Uni.createFrom().item(Answer.created(PaymentView.of(payment)).repeatCaughtBy(caughtBy));
        });
    }
}
