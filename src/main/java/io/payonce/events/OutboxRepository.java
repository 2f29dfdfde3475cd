package io.payonce.events;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** SQL for the outbox. */
@ApplicationScoped
class OutboxRepository {

    private static final String INSERT = """
            INSERT INTO outbox_event (event_id, event_type, user_id, ref_id, idem_key, payload) VALUES (?, ?, ?, ?, ?, ?)""";

    /**
     * The oldest unsent events, locked, a parked one passed over. A relay on another instance that
     * asks at the same moment waits on these rows and then finds them sent, so events go out in id
     * order, one relay at a time; the events of one order were written in that order, since each
     * movement of an order's money holds the order's row lock until it commits. Row locks hold on one
     * node only: relays writing through two nodes of a Galera cluster both publish, and certification
     * fails the later one's marking (duplicates, dropped by event id). Each order's events still go out
     * in order: a node applies a row with its id and hands out higher ids after it, and an order's
     * next movement reads the order only once its node has applied the one before.
     */
    private static final String LOCK_UNSENT = """
            SELECT id, event_id, event_type, payload, refusals FROM outbox_event
            WHERE sent_at IS NULL AND parked_at IS NULL
            ORDER BY id
            LIMIT ?
            FOR UPDATE""";

    /**
     * One statement for the confirmed events of a batch, whatever their number: their ids arrive as
     * one JSON array. A statement per event was one more statement per payment, for nothing.
     */
    private static final String MARK_SENT = """
            UPDATE outbox_event
            JOIN JSON_TABLE(?, '$[*]' COLUMNS (id BIGINT UNSIGNED PATH '$' ERROR ON ERROR)) AS confirmed ON outbox_event.id = confirmed.id
            SET outbox_event.sent_at = NOW(6)""";

    /** One more refusal of a locked event, published alone; a compare-and-set on its leaving neither sent nor parked. */
    private static final String COUNT_REFUSAL = """
            UPDATE outbox_event SET refusals = refusals + 1, last_refusal = ?
            WHERE id = ? AND sent_at IS NULL AND parked_at IS NULL""";

    private static final String PARK = """
            UPDATE outbox_event SET parked_at = NOW(6)
            WHERE id = ? AND sent_at IS NULL AND parked_at IS NULL""";

    private static final String DELETE_SENT = """
            DELETE FROM outbox_event
            WHERE sent_at < NOW(6) - INTERVAL ? SECOND
            ORDER BY sent_at
            LIMIT ?""";

    /**
     * How many events wait, and for how many seconds the oldest has waited; parked ones apart, since
     * they wait for an operator, not for the relay.
     */
    private static final String BACKLOG = """
            SELECT COUNT(*) - COUNT(parked_at) AS waiting, COUNT(parked_at) AS parked,
                   COALESCE(TIMESTAMPDIFF(SECOND, MIN(CASE WHEN parked_at IS NULL THEN created_at END), NOW(6)), 0) AS oldest_seconds
            FROM outbox_event WHERE sent_at IS NULL""";

    /** last_refusal's length. */
    private static final int REFUSAL_LENGTH = 255;

    private final Pool pool;

    OutboxRepository(Pool pool) {
        this.pool = pool;
    }

    Uni<Void> insert(SqlClient tx, Event event, EventType type, String payload) {
        return tx.preparedQuery(INSERT)
                .execute(Tuple.of(event.eventId(), type.routingKey(), event.userId(), event.ref(), event.idempotencyKey(), payload))
                .replaceWithVoid();
    }

    Uni<List<PendingEvent>> lockUnsent(SqlClient tx, int limit) {
        return tx.preparedQuery(LOCK_UNSENT).execute(Tuple.of(limit)).map(OutboxRepository::pending);
    }

    Uni<Void> markSent(SqlClient tx, List<PendingEvent> batch) {
        if (batch.isEmpty()) {
            return Uni.createFrom().voidItem();
        }
        String ids = batch.stream().map(event -> Long.toString(event.id())).collect(Collectors.joining(",", "[", "]"));
        return tx.preparedQuery(MARK_SENT).execute(Tuple.of(ids)).replaceWithVoid();
    }

    /** The broker's words are cut to what the column holds: they are for an operator to read. */
    Uni<Void> countRefusal(SqlClient tx, PendingEvent event, String refusal) {
        String words = refusal.length() > REFUSAL_LENGTH ? refusal.substring(0, REFUSAL_LENGTH) : refusal;
        return tx.preparedQuery(COUNT_REFUSAL).execute(Tuple.of(words, event.id())).replaceWithVoid();
    }

    Uni<Void> park(SqlClient tx, PendingEvent event) {
        return tx.preparedQuery(PARK).execute(Tuple.of(event.id())).replaceWithVoid();
    }

    Uni<Integer> deleteSentOlderThan(Duration age, int limit) {
        return pool.preparedQuery(DELETE_SENT).execute(Tuple.of(age.toSeconds(), limit)).map(RowSet::rowCount);
    }

    Uni<Backlog> backlog() {
        return pool.query(BACKLOG).execute().map(rows -> {
            Row row = rows.iterator().next();
            return new Backlog(row.getLong("waiting"), row.getLong("parked"), row.getLong("oldest_seconds"));
        });
    }

    private static List<PendingEvent> pending(RowSet<Row> rows) {
        List<PendingEvent> pending = new ArrayList<>(rows.rowCount());
        for (Row row : rows) {
            pending.add(new PendingEvent(row.getLong("id"), row.getString("event_id"), row.getString("event_type"),
                    row.getString("payload"), row.getInteger("refusals")));
        }
        return pending;
    }

    /** An event waiting for the relay, and how often the broker has refused it published alone. */
    record PendingEvent(long id, String eventId, String type, String payload, int refusals) {
    }

    /** The relay's backlog, for the gauges: what waits for the relay, what waits for an operator. */
    record Backlog(long waiting, long parked, long oldestSeconds) {
    }
}
