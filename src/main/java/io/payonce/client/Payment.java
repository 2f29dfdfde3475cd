package io.payonce.client;

import com.fasterxml.jackson.databind.JsonNode;

/** A payment: {@code method} is balance or card; {@code phase} SUCCEEDED or DECLINED once definite. */
public record Payment(long id, long orderId, long amount, String currency, String method, String phase) {

    /** The payment an answer of payonce holds; an answer that holds none is not payonce's. */
    static Payment of(JsonNode json) {
        Answers.require(json, "paymentId", "phase");
        return new Payment(json.path("paymentId").asLong(), json.path("orderId").asLong(), json.path("amount").asLong(),
                json.path("currency").asText(), json.path("method").asText(), json.path("phase").asText());
    }

    /** Whether the processor's outcome is known: SUCCEEDED or DECLINED. */
    boolean definite() {
        return phase.equals("SUCCEEDED") || phase.equals("DECLINED");
    }
}
