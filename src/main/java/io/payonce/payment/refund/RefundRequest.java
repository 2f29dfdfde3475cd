package io.payonce.payment.refund;

import io.quarkus.runtime.annotations.RegisterForReflection;
import io.payonce.input.Identifiers;
import io.payonce.input.MaxAmount;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Positive;
import org.eclipse.microprofile.openapi.annotations.extensions.Extension;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** The body of {@code POST /orders/{id}/refunds}: the caller's refund number and how much to refund. */
@RegisterForReflection
public record RefundRequest(
        @NotNull @Pattern(regexp = Identifiers.BUSINESS_NUMBER) String refundNo,
        @NotNull @Positive @MaxAmount @Schema(extensions = @Extension(name = MaxAmount.DOCUMENTED_BY, value = MaxAmount.SETTING)) Long amount) {
}
