package io.payonce.payment;

import io.payonce.order.Order;
import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * The answer to a pay request: the order's payment. {@code phase} is SUCCEEDED in a 201, and
 * UNKNOWN in the 202 of a card payment whose processor's answer was lost.
 */
@RegisterForReflection
public record PaymentView(long paymentId, long orderId, long amount, String currency, PaymentMethod method, PaymentPhase phase) {

    static PaymentView of(long paymentId, Order order) {
        return new PaymentView(paymentId, order.id(), order.amount(), order.currency(), PaymentMethod.BALANCE, PaymentPhase.SUCCEEDED);
    }

    static PaymentView of(Payment payment) {
        return new PaymentView(payment.id(), payment.orderId(), payment.amount(), payment.currency(), payment.method(), payment.phase());
    }

    static PaymentView of(CardPayment payment) {
        return new PaymentView(payment.id(), payment.orderId(), payment.amount(), payment.currency(), PaymentMethod.CARD, payment.phase());
    }
}
