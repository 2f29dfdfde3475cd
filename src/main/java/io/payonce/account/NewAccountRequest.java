package io.payonce.account;

import io.payonce.input.Identifiers;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;

/** The body of {@code POST /accounts}. */
public record NewAccountRequest(
        @NotNull @Pattern(regexp = Identifiers.USER_ID) String userId,
        @NotNull @Pattern(regexp = Identifiers.CURRENCY) String currency) {
}
