package io.payonce.db;

import io.payonce.support.Await;
import io.payonce.support.Database;
import io.payonce.support.Meters;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link PipelinedTransactions} against the real MariaDB, with bodies of plain statements on a table
 * of its own: whatever stops a body in the middle, with statements already sent behind the one that
 * failed, nothing of it commits.
 */
@QuarkusTest
class PipelinedTransactionsTest {

    private static final String NAME = PipelinedMeter.NAME;
    /** Rows the other session writes first, so that InnoDB picks the lighter pipelined body as the deadlock's victim. */
    private static final int HEAVIER_BY_ROWS = 50;

    private static final Database DB = Database.forTests();

    /** Threads of the test's own for sessions that wait: the common pool may have one thread on two cores. */
    private final ExecutorService sessions = Executors.newCachedThreadPool();

    @Inject
    PipelinedTransactions transactions;

    @Inject
    Meters meters;

    @BeforeAll
    static void createTable() {
        DB.update("CREATE TABLE IF NOT EXISTS pipelining_probe (id INT PRIMARY KEY, v INT NOT NULL) ENGINE=InnoDB");
    }

    @AfterAll
    static void dropTable() {
        DB.update("DROP TABLE IF EXISTS pipelining_probe");
    }

    @BeforeEach
    void twoRows() {
        DB.update("DELETE FROM pipelining_probe");
        DB.update("INSERT INTO pipelining_probe (id, v) VALUES (1, 0), (2, 0)");
    }

    /**
     * The body updates row 1, waits for a user lock the test holds, updates row 2 and inserts row 3,
     * all sent at once. Another session holds row 2 and, while the body waits, waits for row 1; the
     * test then lets the body go on, and its update of row 2 closes a cycle that InnoDB ends by
     * rolling the body back there. The INSERT sent behind it still runs: under autocommit=0 in a new
     * implicit transaction that the ROLLBACK ends; under autocommit=1 after a BEGIN it would commit
     * alone (red so).
     */
    @Test
    void aDeadlockInTheMiddleCommitsNothingSentBehindIt() throws Exception {
        long deadlocksBefore = status("INNODB_DEADLOCKS");
        double failedBefore = meters.count(NAME, "outcome", "failed");

        try (Connection gate = DB.connect(); Connection other = DB.connect()) {
            update(gate, "DO GET_LOCK('pipelining-probe', 10)");
            other.setAutoCommit(false);
            update(other, "INSERT INTO pipelining_probe (id, v) SELECT seq, 0 FROM seq_100_to_" + (99 + HEAVIER_BY_ROWS));
            update(other, "UPDATE pipelining_probe SET v = v + 10 WHERE id = 2");
            CompletableFuture<String> body = run(tx -> all(tx,
                    "UPDATE pipelining_probe SET v = v + 1 WHERE id = 1",
                    "DO GET_LOCK('pipelining-probe', 10)",
                    "SET STATEMENT innodb_lock_wait_timeout = 10 FOR UPDATE pipelining_probe SET v = v + 1 WHERE id = 2",
                    "INSERT INTO pipelining_probe (id, v) VALUES (3, 1)"));
            awaitRunning("DO GET_LOCK('pipelining-probe', 10)");
            CompletableFuture<Integer> otherWaits = CompletableFuture.supplyAsync(
                    () -> update(other, "UPDATE pipelining_probe SET v = v + 10 WHERE id = 1"), sessions);
            awaitRunning("UPDATE pipelining_probe SET v = v + 10 WHERE id = 1");
            update(gate, "DO RELEASE_LOCK('pipelining-probe')");

            assertNull(body.get(30, TimeUnit.SECONDS), "rolled back, not committed");
            assertEquals(1, otherWaits.get(30, TimeUnit.SECONDS), "the other session got row 1 once the body was rolled back");
            other.rollback();
        }
        assertTrue(status("INNODB_DEADLOCKS") > deadlocksBefore, "a deadlock really happened");
        assertEquals(failedBefore + 1, meters.count(NAME, "outcome", "failed"));
        assertEquals(List.of("1 0", "2 0"), rows());
    }

    /**
     * The connection killed by another session while the body's second statement runs, with two more
     * sent behind it: the client answers only the statement in flight, never the two behind, so the
     * attempt ends by its own bound, rolled back, with nothing committed (it never ended before).
     */
    @Test
    void aConnectionLostWithStatementsPipelinedBehindTheOneRunningEndsTheAttempt() throws Exception {
        double failedBefore = meters.count(NAME, "outcome", "failed");

        try (Connection gate = DB.connect()) {
            update(gate, "DO GET_LOCK('pipelining-kill', 10)");
            CompletableFuture<String> body = run(tx -> all(tx,
                    "INSERT INTO pipelining_probe (id, v) VALUES (10, 1)",
                    "DO GET_LOCK('pipelining-kill', 10)",
                    "INSERT INTO pipelining_probe (id, v) VALUES (11, 1)",
                    "INSERT INTO pipelining_probe (id, v) VALUES (12, 1)"));
            awaitRunning("DO GET_LOCK('pipelining-kill', 10)");
            update(gate, "KILL " + DB.string("SELECT id FROM information_schema.processlist WHERE info = ?", "DO GET_LOCK('pipelining-kill', 10)"));

            assertNull(body.get(20, TimeUnit.SECONDS), "given up and rolled back");
        }
        assertEquals(failedBefore + 1, meters.count(NAME, "outcome", "failed"));
        assertEquals(List.of("1 0", "2 0"), rows());
    }

    /**
     * A duplicate key refuses its statement alone and leaves the transaction open with the row before
     * it: rolled back all the same, and counted as declined, since a repeat's claim meets one.
     */
    @Test
    void aStatementRefusedAloneCommitsNothingBeforeOrBehindIt() throws Exception {
        double declinedBefore = meters.count(NAME, "outcome", "declined");

        assertNull(run(tx -> all(tx,
                "INSERT INTO pipelining_probe (id, v) VALUES (10, 1)",
                "INSERT INTO pipelining_probe (id, v) VALUES (1, 1)",
                "INSERT INTO pipelining_probe (id, v) VALUES (11, 1)")).get(10, TimeUnit.SECONDS));

        assertEquals(declinedBefore + 1, meters.count(NAME, "outcome", "declined"), "a duplicate key is a repeat, not a fault");
        assertEquals(List.of("1 0", "2 0"), rows());
    }

    /** A body that writes, then finds a reply it did not expect and answers null: rolled back. */
    @Test
    void aBodyThatDeclinesCommitsNothing() throws Exception {
        double declinedBefore = meters.count(NAME, "outcome", "declined");

        assertNull(run(tx -> all(tx, "UPDATE pipelining_probe SET v = 5 WHERE id = 1").replaceWith((String) null)).get(10, TimeUnit.SECONDS));

        assertEquals(declinedBefore + 1, meters.count(NAME, "outcome", "declined"));
        assertEquals(List.of("1 0", "2 0"), rows());
    }

    /** A body whose replies were all as expected is committed, every statement of it. */
    @Test
    void aBodyAsExpectedIsCommitted() throws Exception {
        double committedBefore = meters.count(NAME, "outcome", "committed");

        assertEquals("sent", run(tx -> all(tx,
                "UPDATE pipelining_probe SET v = 5 WHERE id = 1",
                "INSERT INTO pipelining_probe (id, v) VALUES (3, 1)")).get(10, TimeUnit.SECONDS));

        assertEquals(committedBefore + 1, meters.count(NAME, "outcome", "committed"));
        assertEquals(List.of("1 5", "2 0", "3 1"), rows());
    }

    private CompletableFuture<String> run(Function<SqlConnection, Uni<String>> body) {
        return transactions.commitIfExpected(body).subscribeAsCompletionStage();
    }

    /** The statements sent together, none waiting for another's reply: "sent" when every one succeeded. */
    private static Uni<String> all(SqlConnection tx, String... statements) {
        List<Uni<Integer>> sent = Arrays.stream(statements).map(sql -> tx.query(sql).execute().map(rows -> rows.rowCount())).toList();
        return Uni.join().all(sent).andCollectFailures().replaceWith("sent");
    }

    private static List<String> rows() {
        return DB.strings("SELECT CONCAT(id, ' ', v) FROM pipelining_probe WHERE id < 100 ORDER BY id");
    }

    private static int update(Connection connection, String sql) {
        try (Statement statement = connection.createStatement()) {
            return statement.executeUpdate(sql);
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static void awaitRunning(String statement) {
        Await.until(() -> DB.count("SELECT COUNT(*) FROM information_schema.processlist WHERE info = ?", statement),
                running -> running > 0, Duration.ofSeconds(5), "running: " + statement);
    }

    private static long status(String name) {
        return Long.parseLong(DB.string("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = ?", name));
    }
}
