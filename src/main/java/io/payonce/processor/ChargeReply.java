package io.payonce.processor;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A charge as the processor describes it; fields payonce does not use are ignored. Read from the
 * JSON tree rather than bound by payonce's strict mapper, which refuses a number where text belongs
 * in what clients send: a processor that writes its charge id or decline code as a number is still
 * understood, since a reply payonce could not read would leave a charge that was made UNKNOWN for
 * good. The amount alone must be an integer, as every amount is.
 */
record ChargeReply(String id, String status, Long amount, String currency, String reference, String declineCode) {

    static ChargeReply of(JsonNode charge) {
        JsonNode amount = charge.path("amount");
        return new ChargeReply(text(charge, "id"), text(charge, "status"), amount.isIntegralNumber() && amount.canConvertToLong()
                ? amount.longValue() : null, text(charge, "currency"), text(charge, "reference"), text(charge, "decline_code"));
    }

    /** A scalar field as text, whether the processor wrote it as a string, a number or a boolean; null when absent or not a scalar. */
    static String text(JsonNode charge, String field) {
        JsonNode value = charge.path(field);
        return value.isValueNode() && !value.isNull() ? value.asText() : null;
    }
}
