package io.payonce.payment.refund;

import io.quarkus.runtime.annotations.RegisterForReflection;

import java.util.List;

/**
 * The answer to an operator's settlement of a refund to the card: the refund and the phase it settled
 * in, and the audit row the settlement wrote, what the operator asked (the refunds it acknowledged
 * among them, empty for none) and why, and what the processor said.
 *
 * @param settledBy the operator, as their bearer token names them
 */
@RegisterForReflection
public record RefundSettlementView(long refundId, long orderId, RefundPhase phase, RefundSettlementRequest.Outcome outcome,
                                   String processorRefundId, List<String> acknowledged, String reason, String settledBy,
                                   String processorSaid) {
}
