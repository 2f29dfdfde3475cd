package io.payonce.payment;

/** One refund of an order. */
record Refund(long id, long orderId, String refundNo, long amount) {
}
