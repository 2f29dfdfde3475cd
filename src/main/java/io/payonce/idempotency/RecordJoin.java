package io.payonce.idempotency;

import io.payonce.db.Rows;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.Tuple;

import java.util.function.Function;

/**
 * A keyed write's record read in the same statement as another row, so that a request that needs both
 * makes one round trip instead of two. The statement selects {@link #COLUMNS} and ends its FROM
 * clause with {@link #JOIN}, whose two parameters come first ({@link #parameters}); the record's
 * columns carry a prefix of their own, so they never shadow the other row's.
 */
public final class RecordJoin {

    public static final String COLUMNS = """
            r.operation AS record_operation, r.target AS record_target, r.fingerprint AS record_fingerprint,
            r.request_body AS record_request_body, r.status AS record_status, r.http_status AS record_http_status,
            r.response_body AS record_response_body, r.response_location AS record_response_location""";

    /** The primary key lookup: at most one record, whatever the other row is. */
    public static final String JOIN = "LEFT JOIN idempotency_record r ON r.scope = ? AND r.idem_key = ?";

    private RecordJoin() {
    }

    /** The JOIN's parameters, to which the statement adds its own. */
    public static Tuple parameters(KeyedWrite write) {
        return Tuple.of(write.scope(), write.key().value());
    }

    /** The first of {@code rows} as {@code reader} reads it, beside its record; null beside none when there is no row. */
    public static <T> WithRecord<T> first(RowSet<Row> rows, Function<Row, T> reader) {
        Row row = Rows.first(rows);
        return row == null ? new WithRecord<>(null, null) : new WithRecord<>(reader.apply(row), record(row));
    }

    /** The record on {@code row}, or null when the key has none. */
    public static IdempotencyRecord record(Row row) {
        String status = row.getString("record_status");
        if (status == null) {
            return null;
        }
        return new IdempotencyRecord(
                row.getString("record_operation"),
                row.getString("record_target"),
                row.getString("record_fingerprint"),
                row.getString("record_request_body"),
                "DONE".equals(status),
                row.getInteger("record_http_status"),
                row.getString("record_response_body"),
                row.getString("record_response_location"));
    }
}
