package io.payonce.payment;

import io.payonce.db.UtcTimes;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;

import java.time.Instant;
import java.util.List;

/**
 * The phases a payment or a refund went through, as its lookup shows them, read alike for both. One
 * on the balance was SUCCEEDED from its first commit and has no history rows: its history is that one
 * phase, at its creation. One by card has a row for each phase it entered, in the order entered.
 */
public final class PhaseHistory {

    /** The stored word for it, a payment's and a refund's alike. */
    private static final String SUCCEEDED = "SUCCEEDED";

    private PhaseHistory() {
    }

    /** One line of a history in its kind's own types: the phase in its stored word, a word on why (null where none), when. */
    @FunctionalInterface
    public interface Line<E> {
        E of(String phase, String detail, Instant at);
    }

    /**
     * The history of {@code record}, a row that holds its {@code id}, {@code method} and
     * {@code created_at}; {@code select} reads its history rows by that id, as {@code phase},
     * {@code detail} and {@code created_at}, oldest first.
     */
    public static <E> Uni<List<E>> of(SqlClient client, String select, Row record, Line<E> line) {
        if (PaymentMethod.valueOf(record.getString("method")) == PaymentMethod.BALANCE) {
            return Uni.createFrom().item(List.of(line.of(SUCCEEDED, null, UtcTimes.instant(record, "created_at"))));
        }
        return client.preparedQuery(select).execute(Tuple.of(record.getLong("id"))).map(rows -> rows.stream()
                .map(row -> line.of(row.getString("phase"), row.getString("detail"), UtcTimes.instant(row, "created_at"))).toList());
    }
}
