package io.payonce.events;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.UUID;

/**
 * Writes an event in the caller's transaction, beside the ledger line of the money it reports: the
 * event commits or rolls back with the money, so it exists if and only if the money moved. A
 * recorded refusal (insufficient funds, a cap) rolls back the guard's transaction and takes the
 * event with it. The relay publishes it after COMMIT.
 */
@ApplicationScoped
public class Outbox {

    private final OutboxRepository events;
    private final ObjectMapper json;

    Outbox(OutboxRepository events, ObjectMapper json) {
        this.events = events;
        this.json = json;
    }

    /**
     * The event of a payment or a refund, naming how its money moved.
     *
     * @param ref     a payment's or refund's id: what its ledger line, or its record at the processor, names
     * @param key     the idempotency key of the request that moved the money
     */
    public Uni<Void> record(SqlClient tx, EventType type, Method method, String userId, long orderId, String ref, long amount,
                            String currency, String key) {
        return write(tx, type, method, userId, orderId, ref, amount, currency, key, null);
    }

    /** The event of a deposit: it belongs to no order, and a deposit always goes to the balance. */
    public Uni<Void> recordDeposit(SqlClient tx, String userId, String reference, long amount, String currency, String key) {
        return write(tx, EventType.DEPOSIT_CREDITED, null, userId, null, reference, amount, currency, key, null);
    }

    /**
     * Writes {@code type}, the event of an operator's settlement of a card payment or a refund to the
     * card ({@code payment.settled-by-operator}, {@code refund.settled-by-operator}), {@code ref} of
     * {@code amount}, settled as {@code outcome} under the operator's {@code key}, in the settlement's
     * transaction.
     */
    public Uni<Void> recordSettlement(SqlClient tx, EventType type, String userId, long orderId, String ref, long amount, String currency,
                                      String key, String outcome) {
        return write(tx, type, Method.CARD, userId, orderId, ref, amount, currency, key, outcome);
    }

    /** {@code method} is null for a deposit; {@code outcome} only for an operator's settlement. */
    private Uni<Void> write(SqlClient tx, EventType type, Method method, String userId, Long orderId, String ref, long amount,
                            String currency, String key, String outcome) {
        String eventId = UUID.randomUUID().toString();
        // The instance's clock, to the microsecond like the database's times: the event is written
        // inside the transaction that moves the money, so this is that moment to within its commit.
        Instant occurredAt = Instant.now().truncatedTo(ChronoUnit.MICROS);
        Event event = new Event(eventId, type.routingKey(), method == null ? null : method.wireName(), userId, orderId, ref, amount,
                currency, key, occurredAt, outcome);
        return events.insert(tx, event, type, toJson(event));
    }

    private String toJson(Event event) {
        try {
            return json.writeValueAsString(event);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("An event is a plain record and always serializes", e);
        }
    }
}
