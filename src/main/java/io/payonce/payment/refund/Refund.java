package io.payonce.payment.refund;

import io.payonce.payment.PaymentMethod;

/**
 * One refund of an order: where its money goes (the balance, or the card the order was paid by) and
 * where it stands; {@code failureCode} is the processor's reason for a FAILED one.
 */
record Refund(long id, long orderId, String refundNo, long amount, PaymentMethod method, RefundPhase phase, String failureCode) {

    /** A refund of a balance payment: credited in the transaction that records it. */
    static Refund toBalance(long id, long orderId, String refundNo, long amount) {
        return new Refund(id, orderId, refundNo, amount, PaymentMethod.BALANCE, RefundPhase.SUCCEEDED, null);
    }
}
