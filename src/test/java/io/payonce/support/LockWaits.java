package io.payonce.support;

import java.time.Duration;

/**
 * How many of payonce's statements wait for a row lock, as InnoDB shows them: for a test that parks
 * several requests on a lock, its own or the first request's, and must see them all waiting before
 * it lets go. {@link Database#awaitWaitingOnRow} finds one.
 */
public final class LockWaits {

    private static final String WAITING = """
            SELECT COUNT(DISTINCT waiting.trx_id)
            FROM information_schema.INNODB_LOCK_WAITS wait
            JOIN information_schema.INNODB_LOCKS requested ON requested.lock_id = wait.requested_lock_id
            JOIN information_schema.INNODB_TRX waiting ON waiting.trx_id = wait.requesting_trx_id
            WHERE requested.lock_table = CONCAT('`', DATABASE(), '`.`', ?, '`') AND waiting.trx_query LIKE CONCAT(?, '%')""";

    private LockWaits() {
    }

    /**
     * Looks until {@code expected} statements beginning with {@code statementStart} wait for the row of
     * {@code table} whose id is {@code id}, or for any row of it when {@code id} is null: a lock on a
     * unique key other than the id, such as the claim of a webhook event's id, whose row the test cannot
     * name. Returns how many it saw, for the test to assert as its set-up; fails after 10 s.
     * <p>
     * A row is waited for by its primary key or by an entry of one of its indexes, whose lock data ends
     * with the row's id: on a small table MariaDB plans an UPDATE by id and phase through the
     * (phase, busy_until) index, and the first such statement takes that entry before the row, so the
     * next ones queue on the entry.
     */
    public static long awaitWaiting(Database db, String table, Long id, String statementStart, long expected) {
        return Await.until(() -> id == null ? db.count(WAITING, table, statementStart)
                        : db.count(WAITING + " AND (requested.lock_data = ? OR requested.lock_data LIKE CONCAT('%, ', ?))"
                                + " AND requested.lock_mode NOT LIKE '%GAP%'",
                        table, statementStart, id, id),
                waiting -> waiting >= expected, Duration.ofSeconds(10),
                expected + " statements " + statementStart + "... waiting for " + (id == null ? "a row" : "the row " + id) + " of " + table);
    }
}
