package io.payonce.payment.refund;

import io.payonce.order.OrderStatus;
import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * The answer to an operator's reversal of a refund to the card: the refund, FAILED now with the
 * processor's failure code, the order as the reversal left it (its status and what remains
 * refundable), and the audit row: why, who, and what the processor said.
 *
 * @param reversedBy the operator, as their bearer token names them
 */
@RegisterForReflection
public record RefundReversalView(long refundId, long orderId, RefundPhase phase, String failureCode, String processorRefundId,
                                 OrderStatus orderStatus, long refundable, String reason, String reversedBy, String processorSaid) {
}
