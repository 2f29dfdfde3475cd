package io.payonce.payment.card;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.payonce.input.Identifiers;
import io.payonce.payment.operation.OperatorClaim;
import io.quarkus.runtime.annotations.RegisterForReflection;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;


/**
 * The body of {@code POST /payments/{id}/settlement}: what an operator found out about a payment the
 * processor cannot account for, the processor's charge when it was charged, and why they say so.
 */
@RegisterForReflection
public record SettlementRequest(
        @NotNull Outcome outcome,
        @Pattern(regexp = Identifiers.NAMED_PROCESSOR_ID) String chargeId,
        @NotBlank @Pattern(regexp = Identifiers.OPERATOR_REASON) String reason) implements OperatorClaim {

    /** What the operator says became of the payment. */
    public enum Outcome {
        /** The card was charged, by the processor's charge the request names: the order is PAID. */
        @JsonProperty("charged") CHARGED,
        /** Nothing was charged: the order is UNPAID again, and can be paid with a new key. */
        @JsonProperty("not_charged") NOT_CHARGED
    }

    @JsonIgnore
    @AssertTrue(message = "charged names the processor's chargeId, and not_charged names none")
    boolean isChargeIdWhereOutcomeNeedsIt() {
        return (outcome == Outcome.CHARGED) == (chargeId != null);
    }

    @Override
    public boolean succeeded() {
        return outcome == Outcome.CHARGED;
    }

    @Override
    public String namedId() {
        return chargeId;
    }
}
