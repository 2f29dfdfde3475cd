package io.payonce.payment.refund;

import io.payonce.input.Identifiers;
import io.quarkus.runtime.annotations.RegisterForReflection;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.Pattern;

/**
 * The body of {@code POST /refunds/{id}/reversal}: why an operator reverses a refund to the card the
 * processor failed after it had succeeded. What failed is the processor's to say, not the body's.
 */
@RegisterForReflection
public record RefundReversalRequest(@NotBlank @Pattern(regexp = Identifiers.OPERATOR_REASON) String reason) {
}
