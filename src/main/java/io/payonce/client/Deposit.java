package io.payonce.client;

import com.fasterxml.jackson.databind.JsonNode;

/** A deposit to a user's balance, and the balance after it. */
public record Deposit(String userId, long amount, String currency, long balance) {

    /** The deposit an answer of payonce holds; an answer that holds none is not payonce's. */
    static Deposit of(JsonNode json) {
        Answers.require(json, "balance", "userId");
        return new Deposit(json.path("userId").asText(), json.path("amount").asLong(), json.path("currency").asText(),
                json.path("balance").asLong());
    }
}
