package io.payonce.payment.refund;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import io.payonce.input.Identifiers;
import io.payonce.payment.operation.OperatorClaim;
import io.quarkus.runtime.annotations.RegisterForReflection;
import jakarta.validation.constraints.AssertTrue;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Size;

import java.util.List;
import java.util.Objects;

/**
 * The body of {@code POST /refunds/{id}/settlement}: what an operator found out about a refund to the
 * card the processor cannot account for, the processor's refund when the card was refunded, why they
 * say so, and, for not refunded, the refunds of the charge they acknowledge ({@link RefundProcessorVerdict#notRefunded}).
 */
@RegisterForReflection
public record RefundSettlementRequest(
        @NotNull Outcome outcome,
        @Pattern(regexp = Identifiers.NAMED_PROCESSOR_ID) String processorRefundId,
        @NotBlank @Pattern(regexp = Identifiers.OPERATOR_REASON) String reason,
        @Size(max = MOST_ACKNOWLEDGED) List<@NotNull @Pattern(regexp = Identifiers.NAMED_PROCESSOR_ID) String> acknowledged)
        implements OperatorClaim {

    /** What the operator says became of the refund. */
    public enum Outcome {
        /** The money went back to the card, by the processor's refund the request names: the refund SUCCEEDED. */
        @JsonProperty("refunded") REFUNDED,
        /** Nothing went back to the card: the refund FAILED, and its amount is refundable again. */
        @JsonProperty("not_refunded") NOT_REFUNDED
    }

    @JsonIgnore
    @AssertTrue(message = "refunded names the processor's processorRefundId, and not_refunded names none")
    boolean isProcessorRefundIdWhereOutcomeNeedsIt() {
        return (outcome == Outcome.REFUNDED) == (processorRefundId != null);
    }

    /** How many of the processor's refunds one settlement may acknowledge. */
    static final int MOST_ACKNOWLEDGED = 10;

    /**
     * How many characters their ids may take together: ten of the 255 payonce keeps of an id, which
     * the audit row's column holds with their commas, and with which the whole request fits the
     * record its key keeps of it. One id may be longer, up to 1000, as the processor wrote it.
     */
    static final int MOST_ACKNOWLEDGED_CHARACTERS = 2550;

    /** An empty list acknowledges nothing, as no list does: one request, one fingerprint under its key. */
    public RefundSettlementRequest {
        if (acknowledged != null && acknowledged.isEmpty()) {
            acknowledged = null;
        }
    }

    @JsonIgnore
    @AssertTrue(message = "acknowledged names at most " + MOST_ACKNOWLEDGED_CHARACTERS + " characters of ids in all")
    boolean isAcknowledgedWithinItsLength() {
        return acknowledged == null || acknowledged.stream().filter(Objects::nonNull).mapToInt(String::length).sum() <= MOST_ACKNOWLEDGED_CHARACTERS;
    }

    @JsonIgnore
    @AssertTrue(message = "acknowledged names the processor's refunds a not_refunded reconciles, each once")
    boolean isAcknowledgedOnlyWithNotRefunded() {
        return acknowledged == null || acknowledged.isEmpty() || !succeeded() && acknowledged.stream().distinct().count() == acknowledged.size();
    }

    @Override
    public boolean succeeded() {
        return outcome == Outcome.REFUNDED;
    }

    @Override
    public String namedId() {
        return processorRefundId;
    }

    /** The processor's refunds this settlement acknowledges; none when it names none. */
    List<String> acknowledgedRefunds() {
        return acknowledged == null ? List.of() : acknowledged;
    }
}
