package io.payonce.payment.refund;

import io.payonce.order.Order;
import io.payonce.order.OrderStatus;
import io.payonce.payment.PaymentMethod;
import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * The answer to a refund request, with the order's refunded total and status after it. {@code method}
 * says where the money goes: the balance for a balance payment, the card for a card payment.
 * {@code phase} is SUCCEEDED in a 201, and UNKNOWN in the 202 of a card refund whose processor's
 * answer was lost. The refunded total counts the refunds to the card still in flight: their amounts
 * are reserved until they succeed or fail.
 */
@RegisterForReflection
public record RefundView(long refundId, long orderId, String refundNo, long amount, PaymentMethod method, RefundPhase phase,
                         long refundedTotal, OrderStatus orderStatus) {

    /** Where refunds are read, each at its id beneath. */
    public static final String PATH = "/refunds";

    /** Where ops read refund {@code refundId}: the Location of a 202. */
    static String location(long refundId) {
        return PATH + "/" + refundId;
    }

    static RefundView of(Refund refund, Order order) {
        return new RefundView(refund.id(), order.id(), refund.refundNo(), refund.amount(), refund.method(), refund.phase(),
                order.refundedAmount(), order.status());
    }
}
