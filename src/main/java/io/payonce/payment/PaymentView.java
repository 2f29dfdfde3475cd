package io.payonce.payment;

import io.quarkus.runtime.annotations.RegisterForReflection;
import io.payonce.order.Order;

/** The answer to a pay request; {@code alreadyPaid} says that an earlier request made this payment. */
@RegisterForReflection
public record PaymentView(long paymentId, long orderId, long amount, String currency, boolean alreadyPaid) {

    static PaymentView charged(long paymentId, Order order) {
        return new PaymentView(paymentId, order.id(), order.amount(), order.currency(), false);
    }

    static PaymentView existing(Payment payment) {
        return new PaymentView(payment.id(), payment.orderId(), payment.amount(), payment.currency(), true);
    }
}
