package io.payonce.payment;

/** The one payment of an order. */
record Payment(long id, long orderId, long amount, String currency) {
}
