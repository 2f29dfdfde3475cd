package io.payonce.webhook;

import org.eclipse.microprofile.openapi.annotations.enums.SchemaType;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

import java.util.Map;

/**
 * A webhook event as the API document describes it to the processor and the gateway. Never bound:
 * the body is read from the bytes that arrived, which the signature covers ({@link ProcessorEvent}).
 */
@Schema(name = "ProcessorEvent", description = "A webhook event of the processor, signed in the Processor-Signature header")
record ProcessorEventBody(
        @Schema(required = true, maxLength = 255, pattern = ID_PATTERN, description = "The event's id: each id has at most one effect")
        String id,
        @Schema(required = true, maxLength = 64, pattern = "^[a-z0-9_.]{1,64}$",
                description = "charge.succeeded and charge.failed settle the card payment made under the charge's idempotency_key; "
                        + "refund.succeeded and refund.failed settle the refund to the card made under the refund's idempotency_key; "
                        + "charge.refunded is kept, not applied (it names the charge, not the refund); any other type is kept and ignored")
        String type,
        @Schema(description = "When the processor created the event, in Unix seconds") Long created,
        @Schema(required = true) Data data) {

    static final String ID_PATTERN = "^[A-Za-z0-9._:-]{1,255}$";

    record Data(@Schema(required = true, type = SchemaType.OBJECT,
            description = "The charge (id, amount, currency, status, reference, decline_code, idempotency_key) or refund (id, charge, "
                    + "amount, currency, status, failure_code, idempotency_key) the event is about")
                Map<String, Object> object) {
    }
}
