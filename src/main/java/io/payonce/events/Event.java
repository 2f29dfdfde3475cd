package io.payonce.events;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.quarkus.runtime.annotations.RegisterForReflection;

import java.time.Instant;

/**
 * An event as published: its stable id, what happened, whose money, the order and the record that
 * moved it, how much, and the idempotency key of the request that caused it, carried downstream so
 * that a consumer can tie the event to the request. Fields that do not apply are left out.
 *
 * @param method     {@code balance} or {@code card} ({@link Method}) for a payment or a refund; none for a deposit
 * @param ref        the payment's or refund's id, or the deposit's external reference: what the ledger line names
 * @param occurredAt when the money moved, in UTC: written with the event, the same on every publish of it
 * @param outcome    what an operator settled a payment as ({@code charged}, {@code not_charged}), or a refund
 *                   ({@code refunded}, {@code not_refunded}), or {@code reversed}; only on {@code payment.settled-by-operator},
 *                   {@code refund.settled-by-operator} and {@code refund.reversed}
 */
@RegisterForReflection
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Event(String eventId, String type, String method, String userId, Long orderId, String ref, long amount, String currency,
                    String idempotencyKey, Instant occurredAt, String outcome) {
}
