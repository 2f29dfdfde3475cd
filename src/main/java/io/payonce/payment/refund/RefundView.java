package io.payonce.payment.refund;

import io.quarkus.runtime.annotations.RegisterForReflection;
import io.payonce.order.Order;
import io.payonce.order.OrderStatus;

/** The answer to a refund request, with the order's refunded total and status after it. */
@RegisterForReflection
public record RefundView(long refundId, long orderId, String refundNo, long amount, long refundedTotal, OrderStatus orderStatus) {

    static RefundView of(Refund refund, Order order) {
        return new RefundView(refund.id(), order.id(), refund.refundNo(), refund.amount(), order.refundedAmount(), order.status());
    }
}
