package io.payonce.processor;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * A refund as the processor describes it, read from the JSON tree as a charge is ({@link ChargeReply}):
 * a refund id or a failure code written as a number is still understood; the amount alone must be an
 * integer.
 */
record RefundReply(String id, String status, String charge, Long amount, String currency, String failureCode, String reference,
                   String key) {

    static RefundReply of(JsonNode refund) {
        JsonNode amount = refund.path("amount");
        return new RefundReply(text(refund, "id"), text(refund, "status"), text(refund, "charge"),
                amount.isIntegralNumber() && amount.canConvertToLong() ? amount.longValue() : null, text(refund, "currency"),
                text(refund, "failure_code"), text(refund, "reference"), text(refund, "idempotency_key"));
    }

    static String text(JsonNode refund, String field) {
        JsonNode value = refund.path(field);
        return value.isValueNode() && !value.isNull() ? value.asText() : null;
    }
}
