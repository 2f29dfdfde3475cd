package io.payonce.payment.refund;

/** One refund of an order. */
record Refund(long id, long orderId, String refundNo, long amount) {
}
