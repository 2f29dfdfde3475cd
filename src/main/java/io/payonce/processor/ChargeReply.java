package io.payonce.processor;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A charge as the processor describes it; fields payonce does not use are ignored. Read from the
 * JSON tree rather than bound by payonce's strict mapper, which refuses a number where text belongs
 * in what clients send: a processor that writes its charge id or decline code as a number is still
 * understood, since a reply payonce could not read would leave a charge that was made UNKNOWN for
 * good. The amounts alone must be integers, as every amount is: the charge's, and how much of it the
 * processor has refunded in total ({@code amount_refunded}), null where it does not say.
 */
record ChargeReply(String id, String status, Long amount, String currency, String reference, String declineCode, Long amountRefunded) {

    static ChargeReply of(JsonNode charge) {
        return new ChargeReply(text(charge, "id"), text(charge, "status"), integer(charge, "amount"), text(charge, "currency"),
                text(charge, "reference"), text(charge, "decline_code"), integer(charge, "amount_refunded"));
    }

    private static Long integer(JsonNode charge, String field) {
        JsonNode value = charge.path(field);
        return value.isIntegralNumber() && value.canConvertToLong() ? value.longValue() : null;
    }

    /** A scalar field as text, whether the processor wrote it as a string, a number or a boolean; null when absent or not a scalar. */
    static String text(JsonNode charge, String field) {
        JsonNode value = charge.path(field);
        return value.isValueNode() && !value.isNull() ? value.asText() : null;
    }
}
