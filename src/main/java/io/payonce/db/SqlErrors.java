package io.payonce.db;

import io.vertx.mysqlclient.MySQLException;

import java.sql.SQLException;
import java.util.Set;

/**
 * What a MariaDB or MySQL error number means to payonce. Every number the service reacts to is
 * named here, once:
 * <ul>
 * <li>1062, duplicate entry: a unique key refused a second row. The row that holds the key is the
 * earlier request's, so the caller answers with it (a repeat) or refuses (a conflict).</li>
 * <li>1205, lock wait timeout: a row stayed locked by another transaction longer than the session's
 * short lock wait.</li>
 * <li>1467, no auto-increment value: most often a wait for a table's AUTO-INC lock that outlasted the
 * lock wait (an INSERT ... SELECT into the table, an operator's say, holds it to the end of its
 * statement, and single-row inserts then queue on it), worth running the transaction again; but also
 * a counter at its maximum, which no retry cures. So it is retried, and not counted as transient:
 * once the retries are spent it is answered and logged as the unexpected failure it then is.</li>
 * <li>1213, deadlock: InnoDB rolled this transaction back to let another go on.</li>
 * <li>1969 (MariaDB) and 3024 (MySQL): a statement cut off by the session's time bound.</li>
 * <li>1040, 1927, 2006, 2013: too many connections, connection killed, server gone, connection
 * lost; 1053, 1290, 1836: a server shutting down or read-only, as during a failover.</li>
 * <li>1047 with "WSREP has not yet prepared node for application use": a Galera node out of the
 * primary component, still joining, or told to reject queries (wsrep_reject_queries); another node,
 * or this one later, takes the transaction. 1047 alone is "unknown command", which a proxy may answer
 * to a command it does not support: a bug, never retried.</li>
 * <li>1180, an error during COMMIT: on a Galera node that left the primary component while it
 * committed, the commit's fate unknown; the transaction runs again, and its claim finds what did
 * commit, as after a lost connection.</li>
 * <li>1193, unknown system variable: a session setting the server does not have ({@link SessionSettings}).</li>
 * </ul>
 * A Galera cluster's certification failure, a write set that conflicts with one committed first on
 * another node, fails the COMMIT with 1213, as a deadlock does: the transaction runs again, and its
 * claim then meets the committed one's.
 */
public final class SqlErrors {

    private static final int DUPLICATE_ENTRY = 1062;
    private static final int LOCK_WAIT_TIMEOUT = 1205;
    private static final int NO_AUTO_INCREMENT_VALUE = 1467;
    private static final int DEADLOCK = 1213;
    private static final Set<Integer> STATEMENT_TIMEOUTS = Set.of(1969, 3024);
    private static final Set<Integer> CONNECTION_LOST = Set.of(1040, 1927, 2006, 2013, 1053, 1290, 1836);
    private static final int UNKNOWN_COMMAND = 1047;
    private static final String NODE_NOT_PREPARED = "WSREP has not yet prepared node";
    private static final int ERROR_DURING_COMMIT = 1180;
    private static final int UNKNOWN_VARIABLE = 1193;

    private SqlErrors() {
    }

    public static boolean isDuplicateKey(Throwable failure) {
        return code(failure) == DUPLICATE_ENTRY;
    }

    public static boolean isLockWaitTimeout(Throwable failure) {
        return code(failure) == LOCK_WAIT_TIMEOUT;
    }

    public static boolean isStatementTimeout(Throwable failure) {
        return STATEMENT_TIMEOUTS.contains(code(failure));
    }

    /** Failed for now, not for good: the same transaction may succeed if run again. */
    public static boolean isTransient(Throwable failure) {
        int code = code(failure);
        return code == LOCK_WAIT_TIMEOUT || code == DEADLOCK || STATEMENT_TIMEOUTS.contains(code) || CONNECTION_LOST.contains(code)
                || code == ERROR_DURING_COMMIT || isNodeNotPrepared(failure);
    }

    public static boolean isUnknownVariable(Throwable failure) {
        return code(failure) == UNKNOWN_VARIABLE;
    }

    public static boolean isDeadlock(Throwable failure) {
        return code(failure) == DEADLOCK;
    }

    public static boolean isNodeNotPrepared(Throwable failure) {
        return code(failure) == UNKNOWN_COMMAND && failure.getMessage() != null && failure.getMessage().contains(NODE_NOT_PREPARED);
    }

    public static boolean isNoAutoIncrementValue(Throwable failure) {
        return code(failure) == NO_AUTO_INCREMENT_VALUE;
    }

    private static int code(Throwable failure) {
        if (failure instanceof MySQLException mysql) {
            return mysql.getErrorCode();
        }
        // The JDBC driver's, for what runs on JDBC connections at start (MigrationLease).
        return failure instanceof SQLException jdbc ? jdbc.getErrorCode() : 0;
    }
}
