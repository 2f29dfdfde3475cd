package io.payonce.db;

import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;

/** Reading the rows a query returned. */
public final class Rows {

    private Rows() {
    }

    /** The first row, or null when the query found none: a read by a key that is unique. */
    public static Row first(RowSet<Row> rows) {
        var iterator = rows.iterator();
        return iterator.hasNext() ? iterator.next() : null;
    }
}
