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
     * The oldest unsent events, locked. A relay on another instance that asks at the same moment
     * waits on these rows and then finds them sent, so events go out in id order, one relay at a
     * time; the events of one order were written in that order, since each movement of an order's
     * money holds the order's row lock until it commits.
     */
    private static final String LOCK_UNSENT = """
            SELECT id, event_id, event_type, payload FROM outbox_event
            WHERE sent_at IS NULL
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

    private static final String DELETE_SENT = """
            DELETE FROM outbox_event
            WHERE sent_at < NOW(6) - INTERVAL ? SECOND
            ORDER BY sent_at
            LIMIT ?""";

    /** How many events wait, and for how many seconds the oldest has waited. */
    private static final String BACKLOG = """
            SELECT COUNT(*) AS waiting, COALESCE(TIMESTAMPDIFF(SECOND, MIN(created_at), NOW(6)), 0) AS oldest_seconds
            FROM outbox_event WHERE sent_at IS NULL""";

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

    Uni<Integer> deleteSentOlderThan(Duration age, int limit) {
        return pool.preparedQuery(DELETE_SENT).execute(Tuple.of(age.toSeconds(), limit)).map(RowSet::rowCount);
    }

    Uni<Backlog> backlog() {
        return pool.query(BACKLOG).execute().map(rows -> {
            Row row = rows.iterator().next();
            return new Backlog(row.getLong("waiting"), row.getLong("oldest_seconds"));
        });
    }

    private static List<PendingEvent> pending(RowSet<Row> rows) {
        List<PendingEvent> pending = new ArrayList<>(rows.rowCount());
        for (Row row : rows) {
            pending.add(new PendingEvent(row.getLong("id"), row.getString("event_id"), row.getString("event_type"),
                    row.getString("payload")));
        }
        return pending;
    }

    /** An event waiting for the relay. */
    record PendingEvent(long id, String eventId, String type, String payload) {
    }

    /** The relay's backlog, for the gauges. */
    record Backlog(long waiting, long oldestSeconds) {
    }
}
