package io.payonce.commands.intake;

import com.fasterxml.jackson.annotation.JsonSubTypes;
import com.fasterxml.jackson.annotation.JsonTypeInfo;
import io.payonce.input.Identifiers;
import io.payonce.input.MaxAmount;
import io.payonce.payment.PayRequest;
import io.payonce.payment.PaymentMethod;
import io.quarkus.runtime.annotations.RegisterForReflection;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Positive;

/**
 * The body of a command message, named by its {@code type}. The message's AMQP message-id is its
 * idempotency key; its app-id names the service that sent it.
 */
@JsonTypeInfo(use = JsonTypeInfo.Id.NAME, property = "type")
@JsonSubTypes({@JsonSubTypes.Type(value = Command.Pay.class, name = "pay"), @JsonSubTypes.Type(value = Command.Refund.class, name = "refund")})
@RegisterForReflection
public sealed interface Command {

    /**
     * Pay an order for its owner, who is named here: the order system acts for the user who clicked.
     * How to pay is said as over HTTP: no {@code method} and no {@code cardToken} pays from the
     * balance; {@code "method":"card"} with the processor's {@code cardToken} pays by card. Those two
     * fields are checked by {@link PayRequest}'s own rules ({@link #payRequest}).
     */
    @RegisterForReflection
    record Pay(@NotNull @Pattern(regexp = Identifiers.USER_ID) String userId, @NotNull @Positive Long orderId,
               PaymentMethod method, String cardToken) implements Command {

        /** Whether it charges a card: its senders are payonce.commands.card-pay-senders, not pay-senders. */
        public boolean byCard() {
            return method == PaymentMethod.CARD;
        }

        /** The request an HTTP pay with the same fields as its body would make, so that one key fingerprints alike on both edges. */
        public PayRequest payRequest() {
            return method == null && cardToken == null ? PayRequest.BALANCE : new PayRequest(method, cardToken);
        }
    }

    /** Refund part or all of a paid order: an act of the service that sends it, as ops would by HTTP. */
    @RegisterForReflection
    record Refund(@NotNull @Positive Long orderId,
                  @NotNull @Pattern(regexp = Identifiers.BUSINESS_NUMBER) String refundNo,
                  @NotNull @Positive @MaxAmount Long amount) implements Command {
    }
}
