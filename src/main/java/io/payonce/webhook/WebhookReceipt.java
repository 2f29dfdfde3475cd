package io.payonce.webhook;

import io.quarkus.runtime.annotations.RegisterForReflection;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

/** The answer to a webhook delivery: the event, and what payonce made of it when it was first recorded. */
@RegisterForReflection
public record WebhookReceipt(
        @Schema(maxLength = 255, pattern = ProcessorEventBody.ID_PATTERN) String eventId,
        @Schema(enumeration = {"APPLIED", "ALREADY_SETTLED", "CONTRADICTING", "UNKNOWN_CHARGE", "UNKNOWN_REFUND", "IGNORED_TYPE",
                "NOT_APPLIED"}) String outcome) {
}
