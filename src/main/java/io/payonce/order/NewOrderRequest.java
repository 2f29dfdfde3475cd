package io.payonce.order;

import io.quarkus.runtime.annotations.RegisterForReflection;
import io.payonce.input.Identifiers;
import io.payonce.input.MaxAmount;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Positive;
import org.eclipse.microprofile.openapi.annotations.extensions.Extension;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** The body of {@code POST /orders}. The owner comes from the caller's token, not from here. */
@RegisterForReflection
public record NewOrderRequest(
        @NotNull @Pattern(regexp = Identifiers.BUSINESS_NUMBER) String orderSn,
        @NotNull @Positive @MaxAmount @Schema(extensions = @Extension(name = MaxAmount.DOCUMENTED_BY, value = MaxAmount.SETTING)) Long amount,
        @NotNull @Pattern(regexp = Identifiers.CURRENCY) String currency) {

    NewOrder forUser(String userId) {
        return new NewOrder(orderSn, userId, amount, currency);
    }
}
