package io.payonce.support;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Direct SQL for tests and for the programs under bench/, over plain JDBC so that it works the same
 * beside an in-process app ({@code @QuarkusTest}) and beside the packaged jar or native executable
 * ({@code *IT}): to set up states the API cannot reach and to check what was written.
 */
public final class Database {

    /** MariaDB's error codes for a deadlock's victim and for a lock waited on past innodb_lock_wait_timeout. */
    private static final int DEADLOCK = 1213;
    private static final int LOCK_WAIT_TIMEOUT = 1205;

    /**
     * Where each table money touches keeps one order's rows and its payer's (%1$d the order, %2$s the
     * payer), phases before the rows they name, so that a restore deletes them before their parents.
     */
    private static final Map<String, String> ORDER_ROWS = new LinkedHashMap<>();
    private static final String PAYMENTS_OF_ORDER = "payment_id IN (SELECT id FROM pay_record WHERE order_id = %1$d)";
    private static final String REFUNDS_OF_ORDER = "refund_id IN (SELECT id FROM refund_record WHERE order_id = %1$d)";

    static {
        for (String table : List.of("payment_phase", "operator_settlement", "processor_event")) {
            ORDER_ROWS.put(table, PAYMENTS_OF_ORDER);
        }
        for (String table : List.of("refund_phase", "refund_settlement", "refund_reversal")) {
            ORDER_ROWS.put(table, REFUNDS_OF_ORDER);
        }
        ORDER_ROWS.put("pay_record", "order_id = %1$d");
        ORDER_ROWS.put("refund_record", "order_id = %1$d");
        ORDER_ROWS.put("orders", "id = %1$d");
        ORDER_ROWS.put("account", "user_id = '%2$s'");
        ORDER_ROWS.put("account_entry", "user_id = '%2$s'");
        ORDER_ROWS.put("idempotency_record", "target = 'order:%1$d'");
        ORDER_ROWS.put("outbox_event", "user_id = '%2$s'");
    }

    private final String name;
    private final String host;
    private final String port;
    private final String url;

    private Database(String name, String host, String port) {
        this.name = name;
        this.host = host;
        this.port = port;
        this.url = "jdbc:mariadb://" + host + ":" + port + "/" + name;
    }

    /** The test database: {@code payonce_test} on the local MariaDB unless the environment says otherwise. */
    public static Database forTests() {
        return named(System.getenv().getOrDefault("PAYONCE_TEST_DB_NAME", "payonce_test"));
    }

    /** Database {@code name} on the server at 127.0.0.1:{@code port}: a private one, or a proxy in front of a cluster. */
    public static Database at(int port, String name) {
        return new Database(name, "127.0.0.1", Integer.toString(port));
    }

    /** Another database on the same server, for a test that starts instances of its own. */
    public static Database named(String name) {
        String host = System.getenv().getOrDefault("PAYONCE_DB_HOST", "127.0.0.1");
        String port = System.getenv().getOrDefault("PAYONCE_DB_PORT", "3306");
        return new Database(name, host, port);
    }

    /**
     * A backup of one order and its payer, by mariadb-dump: the script that puts back their rows in
     * every table money touches as they are now, deleting whatever was written to them since. The
     * rest of the database is left alone: the jobs and the work of tests before go on writing it,
     * and a backup of whole tables would take back their writes too, leaving their rows half
     * restored (an order put back to PAYING whose payment the card recovery job has just settled).
     */
    public String backUpOrder(long orderId) {
        String payer = string("SELECT user_id FROM orders WHERE id = ?", orderId);
        if (!payer.matches("[A-Za-z0-9_-]+")) {
            throw new IllegalArgumentException("a payer id this backup cannot quote: " + payer);
        }
        StringBuilder deletes = new StringBuilder();
        StringBuilder inserts = new StringBuilder();
        ORDER_ROWS.forEach((table, rows) -> {
            String where = rows.formatted(orderId, payer);
            deletes.append("DELETE FROM ").append(table).append(" WHERE ").append(where).append(";\n");
            inserts.append(client(List.of("mariadb-dump", "--compact", "--no-create-info", "--single-transaction", "--where=" + where, name, table), ""));
        });
        // The session mariadb-dump's own header sets: a generated column's dumped value is ignored, not refused.
        return "SET FOREIGN_KEY_CHECKS = 0, SQL_MODE = 'NO_AUTO_VALUE_ON_ZERO';\nSTART TRANSACTION;\n" + deletes + inserts + "COMMIT;\n";
    }

    /** Runs a {@link #backUpOrder backup}'s script: its order and payer are as they were when it was taken. */
    public void restore(String backup) {
        client(List.of("mariadb", name), backup);
    }

    private String client(List<String> command, String input) {
        List<String> invocation = new ArrayList<>(command.subList(0, 1));
        invocation.addAll(List.of("--host=" + host, "--port=" + port, "--user=" + System.getenv().getOrDefault("PAYONCE_DB_USER", "root")));
        invocation.addAll(command.subList(1, command.size()));
        ProcessBuilder builder = new ProcessBuilder(invocation).redirectError(ProcessBuilder.Redirect.INHERIT);
        builder.environment().put("MYSQL_PWD", System.getenv().getOrDefault("PAYONCE_DB_PASSWORD", ""));
        try {
            Process process = builder.start();
            try (var stdin = process.getOutputStream()) {
                stdin.write(input.getBytes(StandardCharsets.UTF_8));
            }
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!process.waitFor(60, TimeUnit.SECONDS) || process.exitValue() != 0) {
                throw new IllegalStateException(invocation.get(0) + " failed on " + name);
            }
            return output;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /**
     * The connection id of a debit that waits for {@code userId}'s account row, once there is one. Asked
     * of InnoDB's lock waits on that very row, so that another pay's debit in flight at the same moment
     * is never taken for the one a test holds back.
     */
    public long awaitDebitWaitingFor(String userId) {
        return awaitWaitingOnRow("account", userId, "UPDATE account SET balance = balance - ");
    }

    /**
     * The connection id of a statement beginning with {@code statementStart} that waits for the row of
     * {@code table} whose primary key is {@code key} (a number or a string), once there is one: a test
     * that holds that row from a session of its own knows this way that payonce has reached it.
     */
    public long awaitWaitingOnRow(String table, Object key, String statementStart) {
        String lockData = key instanceof Number ? "?" : "QUOTE(?)";
        String waiting = Await.until(() -> string("""
                SELECT COALESCE(MAX(waiting.trx_mysql_thread_id), 0)
                FROM information_schema.INNODB_LOCK_WAITS wait
                JOIN information_schema.INNODB_LOCKS requested ON requested.lock_id = wait.requested_lock_id
                JOIN information_schema.INNODB_TRX waiting ON waiting.trx_id = wait.requesting_trx_id
                WHERE requested.lock_table = CONCAT('`', ?, '`.`', ?, '`') AND requested.lock_data = %s
                  AND waiting.trx_query LIKE CONCAT(?, '%%')""".formatted(lockData), name, table, key.toString(), statementStart),
                id -> !"0".equals(id), Duration.ofSeconds(6), "a statement " + statementStart + "... waiting for the row " + key + " of " + table);
        return Long.parseLong(waiting);
    }

    /** Logs in as PAYONCE_DB_USER with PAYONCE_DB_PASSWORD, the variables the service reads; root without a password here by default. */
    public Connection connect() throws SQLException {
        return connect("");
    }

    /**
     * With driver options, such as the server-side prepared statements a load generator wants. The
     * session runs in UTC, as payonce's do, so that a time a test writes with {@code NOW(6)} is the
     * time payonce reads, whatever the server's zone.
     */
    public Connection connect(String options) throws SQLException {
        Connection connection = DriverManager.getConnection(options.isEmpty() ? url : url + "?" + options,
                System.getenv().getOrDefault("PAYONCE_DB_USER", "root"), System.getenv().getOrDefault("PAYONCE_DB_PASSWORD", ""));
        try (Statement utc = connection.createStatement()) {
            utc.execute("SET time_zone = '+00:00'");
        } catch (SQLException e) {
            connection.close();
            throw e;
        }
        return connection;
    }

    public long count(String sql, Object... args) {
        return query(sql, args, rows -> rows.getLong(1));
    }

    public String string(String sql, Object... args) {
        return query(sql, args, rows -> rows.getString(1));
    }

    /** The first column of every row. */
    public List<String> strings(String sql, Object... args) {
        try (Connection connection = connect(); PreparedStatement statement = bind(connection.prepareStatement(sql), args);
             ResultSet rows = statement.executeQuery()) {
            List<String> values = new ArrayList<>();
            while (rows.next()) {
                values.add(rows.getString(1));
            }
            return values;
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    public int update(String sql, Object... args) {
        try (Connection connection = connect(); PreparedStatement statement = bind(connection.prepareStatement(sql), args)) {
            return statement.executeUpdate();
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    /**
     * Closes, from the server's side, every connection to this database but the one asking: what a
     * failover does to a service's pools (the writer gone, its connections with it). Returns how many.
     */
    public int killEveryConnection() {
        List<String> sessions = strings("SELECT ID FROM information_schema.PROCESSLIST WHERE DB = ? AND ID <> CONNECTION_ID()", name);
        for (String session : sessions) {
            try {
                update("KILL CONNECTION " + Long.parseLong(session));
            } catch (IllegalStateException goneMeanwhile) {
                // It ended by itself between the list and the kill.
            }
        }
        // KILL marks a session; it ends in its own thread. Returns once each is gone from the server.
        Await.until(() -> strings("SELECT ID FROM information_schema.PROCESSLIST WHERE DB = ?", name).stream().noneMatch(sessions::contains),
                Duration.ofSeconds(10), "the killed sessions gone");
        return sessions.size();
    }

    public long balance(String userId) {
        return count("SELECT balance FROM account WHERE user_id = ?", userId);
    }

    public long entries(String userId) {
        return count("SELECT COUNT(*) FROM account_entry WHERE user_id = ?", userId);
    }

    public long payments(long orderId) {
        return count("SELECT COUNT(*) FROM pay_record WHERE order_id = ?", orderId);
    }

    /** Returns once the order's payment is committed; fails after 10 s. */
    public void awaitPayment(long orderId) {
        Await.until(() -> payments(orderId) > 0, Duration.ofSeconds(10), "order " + orderId + " paid");
    }

    public String orderStatus(long orderId) {
        return string("SELECT status FROM orders WHERE id = ?", orderId);
    }

    /** How much of the order its refunds hold: succeeded, and reserved by those still waiting. */
    public long refundedAmount(long orderId) {
        return count("SELECT refunded_amount FROM orders WHERE id = ?", orderId);
    }

    /** A payment's phase, as stored (CHARGE_SENT, DECLINED for a card payment). */
    public String paymentPhase(long paymentId) {
        return string("SELECT phase FROM pay_record WHERE id = ?", paymentId);
    }

    /** A refund's phase, as stored. */
    public String refundPhase(long refundId) {
        return string("SELECT phase FROM refund_record WHERE id = ?", refundId);
    }

    /** The phases a payment went through, as its history rows hold them, first first. */
    public List<String> paymentPhases(long paymentId) {
        return strings("SELECT phase FROM payment_phase WHERE payment_id = ? ORDER BY id", paymentId);
    }

    /** The phases a refund went through, as its history rows hold them, first first. */
    public List<String> refundPhases(long refundId) {
        return strings("SELECT phase FROM refund_phase WHERE refund_id = ? ORDER BY id", refundId);
    }

    /** The processor's charge a payment recorded as its own; null before its outcome, or where it had none payonce could keep. */
    public String chargeIdOfPayment(long paymentId) {
        return string("SELECT processor_charge_id FROM pay_record WHERE id = ?", paymentId);
    }

    /** The processor's refund a refund recorded as its own; null as for a charge. */
    public String processorRefundIdOf(long refundId) {
        return string("SELECT processor_refund_id FROM refund_record WHERE id = ?", refundId);
    }

    /** The Idempotency-Key a payment's charge carries at the processor. */
    public String processorKeyOfPayment(long paymentId) {
        return string("SELECT processor_key FROM pay_record WHERE id = ?", paymentId);
    }

    /** The Idempotency-Key a refund carries at the processor. */
    public String processorKeyOfRefund(long refundId) {
        return string("SELECT processor_key FROM refund_record WHERE id = ?", refundId);
    }

    /**
     * Ends an UNKNOWN payment's backoff now, unless a worker holds its lease: the recovery job, or a
     * client's retry, takes it at once. A test that proves what the job finds so waits on the job, not
     * on a backoff that grows to the test profile's 2 s between asks.
     */
    public void endBackoffOfPayment(long paymentId) {
        endBackoff("pay_record", paymentId);
    }

    /** As {@link #endBackoffOfPayment} for a refund to the card. */
    public void endBackoffOfRefund(long refundId) {
        endBackoff("refund_record", refundId);
    }

    /**
     * The update meets payonce's own on the row and on its (phase, busy_until) entry, in either order: where
     * the server ends it as a deadlock's victim, or it outwaits the lock, it is skipped, and the waiting test's
     * next look ends the backoff.
     */
    private void endBackoff(String table, long id) {
        try {
            update("UPDATE " + table + " SET busy_until = NOW(6) - INTERVAL 1 SECOND WHERE id = ? AND phase = 'UNKNOWN' "
                    + "AND (leased_until IS NULL OR leased_until < NOW(6))", id);
        } catch (IllegalStateException e) {
            if (!(e.getCause() instanceof SQLException cause) || (cause.getErrorCode() != DEADLOCK && cause.getErrorCode() != LOCK_WAIT_TIMEOUT)) {
                throw e;
            }
        }
    }

    /** A card payment's attempts: every lease taken and every send counts one. */
    public long chargeAttempts(long paymentId) {
        return count("SELECT charge_attempts FROM pay_record WHERE id = ?", paymentId);
    }

    /** Rows any table holds for a user; used to prove that a rejected request wrote nothing. */
    public long rowsOwnedBy(String userId) {
        return count("""
                SELECT (SELECT COUNT(*) FROM orders WHERE user_id = ?)
                     + (SELECT COUNT(*) FROM account WHERE user_id = ?)
                     + (SELECT COUNT(*) FROM account_entry WHERE user_id = ?)""", userId, userId, userId);
    }

    private interface Reader<T> {
        T read(ResultSet rows) throws SQLException;
    }

    private <T> T query(String sql, Object[] args, Reader<T> reader) {
        try (Connection connection = connect(); PreparedStatement statement = bind(connection.prepareStatement(sql), args);
             ResultSet rows = statement.executeQuery()) {
            if (!rows.next()) {
                throw new IllegalStateException("No row for " + sql);
            }
            return reader.read(rows);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static PreparedStatement bind(PreparedStatement statement, Object[] args) throws SQLException {
        for (int i = 0; i < args.length; i++) {
            statement.setObject(i + 1, args[i]);
        }
        return statement;
    }
}
