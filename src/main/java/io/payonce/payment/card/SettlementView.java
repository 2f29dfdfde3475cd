package io.payonce.payment.card;

import io.payonce.payment.PaymentPhase;
import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * The answer to an operator's settlement: the payment and the phase it settled in, and the audit
 * row the settlement wrote, what the operator asked and why, and what the processor said.
 *
 * @param settledBy the operator, as their bearer token names them
 */
@RegisterForReflection
public record SettlementView(long paymentId, long orderId, PaymentPhase phase, SettlementRequest.Outcome outcome, String chargeId,
                             String reason, String settledBy, String processorSaid) {
}
