package io.payonce.payment.refund;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.payment.PaymentMethod;

import java.util.Map;

/**
 * One refund of an order: where its money goes (the balance, or the card the order was paid by) and
 * where it stands; {@code failureCode} is the processor's reason for a FAILED one.
 */
record Refund(long id, long orderId, String refundNo, long amount, PaymentMethod method, RefundPhase phase, String failureCode) {

    /** A refund of a balance payment: credited in the transaction that records it. */
    static Refund toBalance(long id, long orderId, String refundNo, long amount) {
        return new Refund(id, orderId, refundNo, amount, PaymentMethod.BALANCE, RefundPhase.SUCCEEDED, null);
    }

    /** The 402 of refund {@code id}, which failed with {@code failureCode}: what its key answers, and a repeat of its number. */
    static ApiException failure(long id, String failureCode) {
        return new ApiException(ErrorCode.REFUND_FAILED, Map.of("refundId", id, "failureCode", failureCode), failureCode);
    }
}
