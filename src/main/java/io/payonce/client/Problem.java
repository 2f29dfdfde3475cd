package io.payonce.client;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A problem+json answer (RFC 9457) as payonce writes it: its HTTP {@code status}, its stable
 * {@code code} (null when the answer came from something in front of payonce, a gateway's HTML
 * page, say), its {@code title} and {@code detail}, and the whole body, whose members beside these
 * say more for some codes ({@code paymentId} and {@code declineCode} of a declined card).
 */
public record Problem(int status, String code, String title, String detail, JsonNode body) {

    static Problem of(int status, JsonNode body) {
        return new Problem(status, text(body, "code"), text(body, "title"), text(body, "detail"), body);
    }

    private static String text(JsonNode body, String member) {
        JsonNode value = body.path(member);
        return value.isTextual() ? value.asText() : null;
    }
}
