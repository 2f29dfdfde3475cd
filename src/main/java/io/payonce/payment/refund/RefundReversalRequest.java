package io.payonce.payment.refund;

import io.payonce.input.Identifiers;
import io.quarkus.runtime.annotations.RegisterForReflection;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Pattern;

/**
 * The body of {@code POST /refunds/{id}/reversal}: why an operator reverses a refund to the card the
 * processor failed after it had succeeded. What failed is the processor's to say, not the body's;
 * the body names the processor's refund ({@code processorRefundId}) only where payonce recorded
 * none, the processor having made it under an id payonce cannot keep.
 */
@RegisterForReflection
public record RefundReversalRequest(
        @NotBlank @Pattern(regexp = Identifiers.OPERATOR_REASON) String reason,
        @Pattern(regexp = Identifiers.NAMED_PROCESSOR_ID) String processorRefundId) {
}
