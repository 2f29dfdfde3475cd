package io.payonce.payment;

/** The live payment of an order: the one that is not declined. */
record Payment(long id, long orderId, long amount, String currency, PaymentMethod method, PaymentPhase phase) {
}
