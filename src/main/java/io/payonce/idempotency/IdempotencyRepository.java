package io.payonce.idempotency;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;

/** SQL for idempotency records. */
@ApplicationScoped
class IdempotencyRepository {

    /**
     * The claim. PRIMARY KEY(scope, idem_key): a twin's INSERT waits on this key until the first
     * transaction ends, then fails with 1062 (it committed) or succeeds (it rolled back).
     */
    private static final String CLAIM = """
            INSERT INTO idempotency_record (scope, idem_key, operation, target, fingerprint, request_body, status)
            VALUES (?, ?, ?, ?, ?, ?, 'PROCESSING')""";

    /** A claim that is its own answer: a refusal recorded after its work rolled back. */
    private static final String CLAIM_ANSWERED = """
            INSERT INTO idempotency_record (scope, idem_key, operation, target, fingerprint, request_body, status, http_status, response_body)
            VALUES (?, ?, ?, ?, ?, ?, 'DONE', ?, ?)""";

    private static final String SELECT = "SELECT " + RecordJoin.COLUMNS + " FROM idempotency_record r WHERE r.scope = ? AND r.idem_key = ?";

    /**
     * Completes an open claim with its answer: in the claim's own transaction, or, for a write that
     * went on after its first transaction, in the one that settles it.
     */
    private static final String COMPLETE = """
            UPDATE idempotency_record SET status = 'DONE', http_status = ?, response_body = ?, response_location = ?
            WHERE scope = ? AND idem_key = ? AND status = 'PROCESSING'""";

    /** The answer an open claim gives for now; it stays open. */
    private static final String ANSWER_FOR_NOW = """
            UPDATE idempotency_record SET http_status = ?, response_body = ?, response_location = ?
            WHERE scope = ? AND idem_key = ? AND status = 'PROCESSING'""";

    /** One short batch; the retention job repeats it rather than holding locks with one long delete. */
    private static final String DELETE_EXPIRED = """
            DELETE FROM idempotency_record
            WHERE created_at < NOW(6) - INTERVAL ? SECOND
            ORDER BY created_at
            LIMIT ?""";

    /** The age of the oldest record, read from the end of the age index; NULL when there is none. */
    private static final String OLDEST_AGE = "SELECT TIMESTAMPDIFF(SECOND, MIN(created_at), NOW(6)) AS age FROM idempotency_record";

    private final Pool pool;

    IdempotencyRepository(Pool pool) {
        this.pool = pool;
    }

    Uni<Void> claim(SqlClient tx, KeyedWrite write) {
        Fingerprint fingerprint = write.fingerprint();
        return tx.preparedQuery(CLAIM)
                .execute(Tuple.of(write.scope(), write.key().value(), fingerprint.operation(), fingerprint.target(),
                        fingerprint.sha256(), fingerprint.canonicalRequest()))
                .replaceWithVoid();
    }

    Uni<Void> claimAnswered(SqlClient tx, KeyedWrite write, int httpStatus, String responseBody) {
        Fingerprint fingerprint = write.fingerprint();
        return tx.preparedQuery(CLAIM_ANSWERED)
                .execute(Tuple.of(write.scope(), write.key().value(), fingerprint.operation(), fingerprint.target(),
                        fingerprint.sha256(), fingerprint.canonicalRequest()).addInteger(httpStatus).addString(responseBody))
                .replaceWithVoid();
    }

    Uni<IdempotencyRecord> find(SqlClient tx, KeyedWrite write) {
        return find(tx, write.scope(), write.key());
    }

    Uni<IdempotencyRecord> find(SqlClient client, String scope, IdempotencyKey key) {
        return client.preparedQuery(SELECT).execute(Tuple.of(scope, key.value())).map(IdempotencyRepository::single);
    }

    Uni<Void> complete(SqlClient tx, String scope, IdempotencyKey key, int httpStatus, String responseBody, String location) {
        return tx.preparedQuery(COMPLETE).execute(Tuple.of(httpStatus, responseBody, location, scope, key.value())).replaceWithVoid();
    }

    /** True when the open claim was completed: for a pipelined body, which reads every reply before COMMIT. */
    Uni<Boolean> completeOpen(SqlClient tx, String scope, IdempotencyKey key, int httpStatus, String responseBody, String location) {
        return tx.preparedQuery(COMPLETE).execute(Tuple.of(httpStatus, responseBody, location, scope, key.value()))
                .map(rows -> rows.rowCount() == 1);
    }

    Uni<Void> answerForNow(SqlClient tx, String scope, IdempotencyKey key, int httpStatus, String responseBody, String location) {
        return tx.preparedQuery(ANSWER_FOR_NOW).execute(Tuple.of(httpStatus, responseBody, location, scope, key.value())).replaceWithVoid();
    }


    Uni<Integer> deleteOlderThan(Duration age, int limit) {
        return pool.preparedQuery(DELETE_EXPIRED).execute(Tuple.of(age.toSeconds(), limit)).map(RowSet::rowCount);
    }

    /** Seconds since the oldest record was written; 0 when there is none. */
    Uni<Long> oldestAgeSeconds() {
        return pool.query(OLDEST_AGE).execute().map(rows -> {
            Long age = rows.iterator().next().getLong("age");
            return age == null ? 0L : age;
        });
    }

    private static IdempotencyRecord single(RowSet<Row> rows) {
        var iterator = rows.iterator();
        return iterator.hasNext() ? RecordJoin.record(iterator.next()) : null;
    }
}
