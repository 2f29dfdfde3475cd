package io.payonce.db;

import io.agroal.api.AgroalDataSource;
import io.payonce.config.PayonceConfig;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Refuses to start on a database server that shows a commit to other sessions before the commit is
 * durable ({@code payonce.database.durable-commits-required}; off, it warns). Without a binary log,
 * InnoDB marks a transaction committed, releases its row locks and shows its rows before it writes
 * the commit to its redo log, and a crash in between erases rows other sessions have already read.
 * payonce reads exactly then: a repeat waiting on the key's row lock wakes when the first request's
 * commit releases it, finds the key's answer and replays it, and the client holds an answer for a
 * write the database no longer has. With the binary log, a commit is durable before it is shown (the
 * two-phase commit between the binary log and InnoDB): {@code log_bin}, {@code sync_binlog=1} and
 * {@code innodb_flush_log_at_trx_commit=1} (or 3). A Galera node shows a commit only once every node
 * holds its write set, so that one node's crash loses nothing the others hold; the log flushed at each
 * commit is required there too. {@code DurableCommitsTest} shows both kinds of plain server under a
 * crash. It runs after Flyway's migrations, which an instance of the release before runs beside.
 */
@Startup
@ApplicationScoped
public class DurableCommitsCheck {

    private static final Logger LOG = Logger.getLogger(DurableCommitsCheck.class);

    /** innodb_flush_log_at_trx_commit: 1 writes and flushes the log at each commit, 3 at the prepare too (MariaDB's). */
    private static final Set<String> FLUSHED_AT_COMMIT = Set.of("1", "3");

    public DurableCommitsCheck(AgroalDataSource dataSource, PayonceConfig config) throws SQLException {
        Map<String, String> settings;
        try (Connection connection = dataSource.getConnection()) {
            settings = settings(connection);
        }
        enforce(problem(settings), config.database().durableCommitsRequired());
    }

    /** A problem refuses the start where durable commits are required, and is warned of where they are not. */
    static void enforce(Optional<String> problem, boolean required) {
        problem.ifPresent(found -> {
            if (required) {
                throw new IllegalStateException(found + " To start anyway, and take that risk: PAYONCE_DATABASE_DURABLE_COMMITS_REQUIRED=false.");
            }
            LOG.warn(found + " Starting anyway: payonce.database.durable-commits-required is false.");
        });
    }

    /**
     * The server's settings, read in a read-write transaction: a proxy that splits reads from writes
     * sends it to the server that takes the writes, whose settings are the ones that count.
     */
    static Map<String, String> settings(Connection connection) throws SQLException {
        boolean autoCommit = connection.getAutoCommit();
        connection.setAutoCommit(false);
        try (Statement statement = connection.createStatement()) {
            statement.execute("START TRANSACTION READ WRITE");
            return ServerVariables.read(connection, "log_bin", "sync_binlog", "innodb_flush_log_at_trx_commit", "wsrep_on");
        } finally {
            connection.rollback();
            connection.setAutoCommit(autoCommit);
        }
    }

    static Optional<String> problem(Map<String, String> settings) {
        StringBuilder wrong = new StringBuilder();
        String flush = settings.get("innodb_flush_log_at_trx_commit");
        if (flush == null || !FLUSHED_AT_COMMIT.contains(flush)) {
            wrong.append(" innodb_flush_log_at_trx_commit is ").append(flush).append(", not 1;");
        }
        boolean galera = GaleraSettingsCheck.inCluster(settings);
        if (!galera && !"ON".equalsIgnoreCase(settings.get("log_bin"))) {
            wrong.append(" log_bin is ").append(settings.get("log_bin")).append(", not ON;");
        }
        if (!galera && !"1".equals(settings.get("sync_binlog"))) {
            wrong.append(" sync_binlog is ").append(settings.get("sync_binlog")).append(", not 1;");
        }
        if (wrong.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of("The database server shows a commit to other sessions before the commit is durable:" + wrong
                + " a crash would erase writes payonce has already answered from. Start MariaDB with log_bin, sync_binlog=1 and"
                + " innodb_flush_log_at_trx_commit=1, or use a Galera cluster with innodb_flush_log_at_trx_commit=1"
                + " (docs/operations/scaling.md, \"Durable commits\").");
    }
}
