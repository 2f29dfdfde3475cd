package io.payonce.payment;

import io.payonce.order.Order;
import io.quarkus.runtime.annotations.RegisterForReflection;

/** The answer to a pay request: the order's one payment. */
@RegisterForReflection
public record PaymentView(long paymentId, long orderId, long amount, String currency) {

    static PaymentView of(long paymentId, Order order) {
        return new PaymentView(paymentId, order.id(), order.amount(), order.currency());
    }

    static PaymentView of(Payment payment) {
        return new PaymentView(payment.id(), payment.orderId(), payment.amount(), payment.currency());
    }
}
