package io.payonce.db;

import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;

import java.util.function.Function;

/** Reading the rows a query returned. */
public final class Rows {

    private Rows() {
    }

    /** The first row, or null when the query found none: a read by a key that is unique. */
    public static Row first(RowSet<Row> rows) {
        var iterator = rows.iterator();
        return iterator.hasNext() ? iterator.next() : null;
    }

    /** The first row as {@code read} makes it, or null when the query found none. */
    public static <T> T first(RowSet<Row> rows, Function<Row, T> read) {
        Row row = first(rows);
        return row == null ? null : read.apply(row);
    }
}
