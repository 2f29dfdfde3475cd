package io.payonce.account;

import io.quarkus.runtime.annotations.RegisterForReflection;
import io.payonce.input.Identifiers;
import io.payonce.input.MaxAmount;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Positive;
import org.eclipse.microprofile.openapi.annotations.extensions.Extension;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/**
 * The body of {@code POST /accounts/{userId}/deposits}; the currency must be the account's. The
 * reference names the external settlement (bank transfer, top-up) this deposit books: an account
 * is credited once per reference, whoever sends it and under whatever key.
 */
@RegisterForReflection
public record DepositRequest(
        @NotNull @Positive @MaxAmount @Schema(extensions = @Extension(name = MaxAmount.DOCUMENTED_BY, value = MaxAmount.SETTING)) Long amount,
        @NotNull @Pattern(regexp = Identifiers.CURRENCY) String currency,
        @NotNull @Pattern(regexp = Identifiers.BUSINESS_NUMBER) String reference) {
}
