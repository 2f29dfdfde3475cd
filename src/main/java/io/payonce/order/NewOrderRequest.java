package io.payonce.order;

import io.quarkus.runtime.annotations.RegisterForReflection;
import io.payonce.input.Identifiers;
import io.payonce.input.MaxAmount;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Positive;

/** The body of {@code POST /orders}. The owner comes from the caller's token, not from here. */
@RegisterForReflection
public record NewOrderRequest(
        @NotNull @Pattern(regexp = Identifiers.BUSINESS_NUMBER) String orderSn,
        @NotNull @Positive @MaxAmount Long amount,
        @NotNull @Pattern(regexp = Identifiers.CURRENCY) String currency) {

    NewOrder forUser(String userId) {
        return new NewOrder(orderSn, userId, amount, currency);
    }
}
