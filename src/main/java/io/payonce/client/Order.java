package io.payonce.client;

import com.fasterxml.jackson.databind.JsonNode;

/** An order: {@code status} UNPAID until paid, then PAYING (a card pay not known yet) or PAID, and on. */
public record Order(long id, String orderSn, long amount, String currency, String status) {

    /** The order an answer of payonce holds; an answer that holds none is not payonce's. */
    static Order of(JsonNode json) {
        Answers.require(json, "id", "status");
        return new Order(json.path("id").asLong(), json.path("orderSn").asText(), json.path("amount").asLong(),
                json.path("currency").asText(), json.path("status").asText());
    }
}
