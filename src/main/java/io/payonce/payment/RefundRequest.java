package io.payonce.payment;

import io.quarkus.runtime.annotations.RegisterForReflection;
import io.payonce.input.Identifiers;
import io.payonce.input.MaxAmount;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Positive;

/** The body of {@code POST /orders/{id}/refunds}: the caller's refund number and how much to refund. */
@RegisterForReflection
public record RefundRequest(
        @NotNull @Pattern(regexp = Identifiers.BUSINESS_NUMBER) String refundNo,
        @NotNull @Positive @MaxAmount Long amount) {
}
