package io.payonce.db;

import io.vertx.mysqlclient.MySQLException;

import java.util.Set;

/**
 * What a MariaDB or MySQL error number means to payonce. Every number the service reacts to is
 * named here, once:
 * <ul>
 * <li>1062, duplicate entry: a unique key refused a second row. The row that holds the key is the
 * earlier request's, so the caller answers with it (a repeat) or refuses (a conflict).</li>
 * <li>1205, lock wait timeout: a row stayed locked by another transaction longer than the session's
 * short lock wait; 1467, the same for a table's AUTO-INC lock, which an INSERT ... SELECT into it
 * (an operator's, say) holds to the end of its statement, and which single-row inserts then queue
 * on.</li>
 * <li>1213, deadlock: InnoDB rolled this transaction back to let another go on.</li>
 * <li>1969 (MariaDB) and 3024 (MySQL): a statement cut off by the session's time bound.</li>
 * <li>1040, 1927, 2006, 2013: too many connections, connection killed, server gone, connection
 * lost; 1053, 1290, 1836: a server shutting down or read-only, as during a failover.</li>
 * </ul>
 */
public final class SqlErrors {

    private static final int DUPLICATE_ENTRY = 1062;
    private static final Set<Integer> LOCK_WAIT_TIMEOUTS = Set.of(1205, 1467);
    private static final int DEADLOCK = 1213;
    private static final Set<Integer> STATEMENT_TIMEOUTS = Set.of(1969, 3024);
    private static final Set<Integer> CONNECTION_LOST = Set.of(1040, 1927, 2006, 2013, 1053, 1290, 1836);

    private SqlErrors() {
    }

    public static boolean isDuplicateKey(Throwable failure) {
        return code(failure) == DUPLICATE_ENTRY;
    }

    public static boolean isLockWaitTimeout(Throwable failure) {
        return LOCK_WAIT_TIMEOUTS.contains(code(failure));
    }

    public static boolean isStatementTimeout(Throwable failure) {
        return STATEMENT_TIMEOUTS.contains(code(failure));
    }

    /** Failed for now, not for good: the same transaction may succeed if run again. */
    public static boolean isTransient(Throwable failure) {
        int code = code(failure);
        return LOCK_WAIT_TIMEOUTS.contains(code) || code == DEADLOCK || STATEMENT_TIMEOUTS.contains(code) || CONNECTION_LOST.contains(code);
    }

    private static int code(Throwable failure) {
        return failure instanceof MySQLException mysql ? mysql.getErrorCode() : 0;
    }
}
