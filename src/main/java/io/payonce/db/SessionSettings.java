package io.payonce.db;

import io.payonce.config.PayonceConfig;
import io.vertx.core.Future;
import io.vertx.sqlclient.SqlConnection;

import java.util.List;
import java.util.stream.Stream;

/**
 * The statements every connection runs before it may serve a request:
 * <ul>
 * <li>READ COMMITTED, so that compare-and-set updates lock only the rows they match (no gap
 * locks, fewer deadlocks) and a claim that lost to a twin reads the twin's committed answer;</li>
 * <li>a short lock wait, so that a request queued behind a busy row fails fast into a retry or a
 * 409 instead of holding the client for InnoDB's default 50 seconds;</li>
 * <li>a bound on every statement and on a transaction left idle, so that a holder that stalls
 * (a paused instance, a frozen VM, a half-open connection) is cut off by the server and its locks
 * released, instead of blocking its key and its order until {@code wait_timeout}, 8 hours later;</li>
 * <li>UTC, so that the {@code DATETIME} columns, which carry no zone, hold the UTC wall clock
 * whatever the server's {@code time_zone}: {@code NOW(6)} and the columns' defaults write it,
 * {@link UtcTimes} reads it back as the instant it names. A zone with daylight saving would also
 * write one hour of wall clock twice a year.</li>
 * <li>on a Galera cluster, reads that wait until the node has applied what the cluster committed
 * before them ({@code payonce.database.sync-wait}). A MariaDB server not in a cluster accepts the
 * setting and ignores it; one built without Galera knows no {@code wsrep_} variable (1193), and
 * needs none: there such a setting is skipped.</li>
 * </ul>
 * MariaDB bounds an idle transaction itself ({@code idle_transaction_timeout}). MySQL 8 has no such
 * setting; there the bound is {@code wait_timeout}, which also closes idle pooled connections, so
 * the pool's idle timeout ({@code quarkus.datasource.reactive.idle-timeout}) must be shorter.
 */
public record SessionSettings(List<String> mariaDb, List<String> mySql) {

    private static final String READ_COMMITTED = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED";
    /** An offset, not a zone name: the server needs no time zone tables for it. */
    private static final String UTC = "SET SESSION time_zone = '+00:00'";
    private static final String LOCK_WAIT = "SET SESSION innodb_lock_wait_timeout = ";
    private static final String AUTOCOMMIT_OFF = "SET SESSION autocommit = 0";
    private static final String GALERA_SETTING = "SET SESSION wsrep_";

    public static SessionSettings of(PayonceConfig.Database config) {
        return withLockWait(config, config.lockWaitTimeoutSeconds(), config.lockWaitTimeoutSeconds());
    }

    /**
     * For {@link PipelinedTransactions}' connections: {@code autocommit = 0}, so that a statement
     * sent behind one that the server aborted (a deadlock's victim) opens a new implicit transaction,
     * which the body's ROLLBACK ends, instead of committing alone as it would after a BEGIN with
     * autocommit on; and no lock wait (MySQL's shortest, 1 s, where 0 is not allowed), so that a
     * pipelined body never queues behind a busy row with more statements sent behind the one that
     * waits: the first wait fails it, and the pay goes on one statement at a time, where waiting is
     * cheap and bounded. COMMIT and ROLLBACK leave no transaction open, so the idle transaction
     * bound does not touch an idle connection.
     */
    static SessionSettings forPipelining(PayonceConfig.Database config) {
        SessionSettings settings = withLockWait(config, 0, 1);
        return new SessionSettings(append(settings.mariaDb, AUTOCOMMIT_OFF), append(settings.mySql, AUTOCOMMIT_OFF));
    }

    private static SessionSettings withLockWait(PayonceConfig.Database config, int mariaDbSeconds, int mySqlSeconds) {
        return new SessionSettings(
                List.of(READ_COMMITTED, UTC, LOCK_WAIT + mariaDbSeconds,
                        "SET SESSION max_statement_time = " + config.statementTimeoutSeconds(),
                        "SET SESSION idle_transaction_timeout = " + config.idleTransactionTimeoutSeconds(),
                        "SET SESSION wsrep_sync_wait = " + config.syncWait()),
                List.of(READ_COMMITTED, UTC, LOCK_WAIT + mySqlSeconds,
                        "SET SESSION max_execution_time = " + config.statementTimeoutSeconds() * 1000,
                        "SET SESSION wait_timeout = " + config.idleTransactionTimeoutSeconds()));
    }

    private static List<String> append(List<String> statements, String last) {
        return Stream.concat(statements.stream(), Stream.of(last)).toList();
    }

    /** Runs the statements for the server behind {@code connection}, one after the other; fails at the first that fails. */
    Future<Void> applyTo(SqlConnection connection) {
        List<String> statements = connection.databaseMetadata().fullVersion().contains("MariaDB") ? mariaDb : mySql;
        Future<Void> applied = Future.succeededFuture();
        for (String statement : statements) {
            applied = applied.compose(done -> connection.query(statement).execute().<Void>mapEmpty()
                    .recover(failure -> skippable(statement, failure) ? Future.succeededFuture() : Future.failedFuture(failure)));
        }
        return applied;
    }

    /** A Galera setting on a server built without Galera, which has nothing for it to do. */
    private static boolean skippable(String statement, Throwable failure) {
        return statement.startsWith(GALERA_SETTING) && SqlErrors.isUnknownVariable(failure);
    }
}
