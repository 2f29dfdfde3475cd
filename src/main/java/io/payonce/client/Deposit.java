package io.payonce.client;

import com.fasterxml.jackson.databind.JsonNode;

/** A deposit to a user's balance, and the balance after it. */
public record Deposit(String userId, long amount, String currency, long balance) {

    static Deposit of(JsonNode json) {
        return new Deposit(json.path("userId").asText(), json.path("amount").asLong(), json.path("currency").asText(),
                json.path("balance").asLong());
    }
}
