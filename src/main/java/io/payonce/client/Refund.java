package io.payonce.client;

import com.fasterxml.jackson.databind.JsonNode;

/** A refund, to the balance or the card it was paid with; {@code phase} SUCCEEDED or FAILED once definite. */
public record Refund(long id, long orderId, String refundNo, long amount, String method, String phase) {

    /** The refund an answer of payonce holds; an answer that holds none is not payonce's. */
    static Refund of(JsonNode json) {
        Answers.require(json, "refundId", "phase");
        return new Refund(json.path("refundId").asLong(), json.path("orderId").asLong(), json.path("refundNo").asText(),
                json.path("amount").asLong(), json.path("method").asText(), json.path("phase").asText());
    }

    /** Whether the processor's outcome is known: SUCCEEDED or FAILED. */
    boolean definite() {
        return phase.equals("SUCCEEDED") || phase.equals("FAILED");
    }
}
