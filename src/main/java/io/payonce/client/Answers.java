package io.payonce.client;

import com.fasterxml.jackson.databind.JsonNode;

/** What tells an answer of payonce from a page of something in front of it that answered 2xx. */
final class Answers {

    private Answers() {
    }

    /** Requires {@code number} to be a whole number of the answer, positive for an id, and {@code text} a text of it. */
    static void require(JsonNode json, String number, String text) {
        JsonNode value = json.path(number);
        boolean id = !number.equals("balance");
        if (!value.canConvertToLong() || !value.isIntegralNumber() || (id && value.asLong() <= 0) || !json.path(text).isTextual()) {
            throw new IllegalArgumentException("no " + number + " and " + text + " in it");
        }
    }
}
