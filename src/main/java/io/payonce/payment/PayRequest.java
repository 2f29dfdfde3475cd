package io.payonce.payment;

import com.fasterxml.jackson.annotation.JsonIgnore;
import io.payonce.input.Identifiers;
import io.quarkus.runtime.annotations.RegisterForReflection;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;

/**
 * The optional body of {@code POST /orders/{id}/pay}: how to pay. No body pays from the balance,
 * as {@code {"method":"balance"}} does. The amount is always the order's own.
 */
@RegisterForReflection
public record PayRequest(
        @NotNull PaymentMethod method,
        @Pattern(regexp = Identifiers.CARD_TOKEN) String cardToken) {

    /** The request a pay without a body makes. */
    public static final PayRequest BALANCE = new PayRequest(PaymentMethod.BALANCE, null);

    @JsonIgnore
    @AssertTrue(message = "a card pay names its cardToken, and a balance pay has none")
    boolean isCardTokenWhereMethodNeedsIt() {
        return (method == PaymentMethod.CARD) == (cardToken != null);
    }

    /**
     * What the key is bound to: a balance pay is bound to no body at all, so that a retry that
     * leaves out {@code {"method":"balance"}}, or adds it, is still the same request.
     */
    public Object fingerprinted() {
        return method == PaymentMethod.BALANCE ? null : this;
    }
}
