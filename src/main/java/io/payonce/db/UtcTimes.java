package io.payonce.db;

import io.vertx.mutiny.sqlclient.Row;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;

/**
 * Reads a time the database wrote. payonce's {@code DATETIME} columns carry no zone: every session
 * runs in UTC ({@link SessionSettings}), so {@code NOW(6)} and {@code CURRENT_TIMESTAMP(6)} write
 * the UTC wall clock, and the client hands a column back as that wall clock, which is read here as
 * the instant it names.
 */
public final class UtcTimes {

    private UtcTimes() {
    }

    /** The instant in {@code column}; null where the column is NULL. */
    public static Instant instant(Row row, String column) {
        LocalDateTime utc = row.getLocalDateTime(column);
        return utc == null ? null : utc.toInstant(ZoneOffset.UTC);
    }
}
