package io.payonce.payment.refund;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.payonce.input.Identifiers;
import io.quarkus.runtime.annotations.RegisterForReflection;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;

import java.util.Locale;

/**
 * The body of {@code POST /refunds/{id}/settlement}: what an operator found out about a refund to the
 * card the processor cannot account for, the processor's refund when the card was refunded, and why
 * they say so.
 */
@RegisterForReflection
public record RefundSettlementRequest(
        @NotNull Outcome outcome,
        @Pattern(regexp = Identifiers.PROCESSOR_ID) String processorRefundId,
        @NotBlank @Pattern(regexp = Identifiers.OPERATOR_REASON) String reason) {

    /** What the operator says became of the refund. */
    public enum Outcome {
        /** The money went back to the card, by the processor's refund the request names: the refund SUCCEEDED. */
        @JsonProperty("refunded") REFUNDED,
        /** Nothing went back to the card: the refund FAILED, and its amount is refundable again. */
        @JsonProperty("not_refunded") NOT_REFUNDED;

        /** As the audit row and the event write it: as the request does. */
        public String text() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    @JsonIgnore
    @AssertTrue(message = "refunded names the processor's processorRefundId, and not_refunded names none")
    boolean isProcessorRefundIdWhereOutcomeNeedsIt() {
        return (outcome == Outcome.REFUNDED) == (processorRefundId != null);
    }

    boolean refunded() {
        return outcome == Outcome.REFUNDED;
    }
}
