package io.payonce.db;

import io.payonce.support.Await;
import io.payonce.support.PrivateMariaDb;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Why payonce refuses a database server without a binary log ({@link DurableCommitsCheck}), shown on
 * servers of the test's own under a crash. Their redo log's writes are held while one session commits
 * a row (stall-log-writes.c, compiled here and preloaded into mariadbd), another session reads, and
 * the server is killed: the overlap is forced, never waited for by luck.
 */
class DurableCommitsTest {

    private static final Path STALL_SOURCE = Path.of("src/test/resources/durability/stall-log-writes.c");
    private static final Path STALL_LIBRARY = Path.of("target/stall-log-writes.so").toAbsolutePath();
    private static final List<String> BINARY_LOG = List.of("--log-bin=binlog", "--sync-binlog=1", "--server-id=1");

    @BeforeAll
    static void compileTheStall() throws IOException, InterruptedException {
        Process gcc = new ProcessBuilder("gcc", "-shared", "-fPIC", "-O2", "-o", STALL_LIBRARY.toString(), STALL_SOURCE.toString(), "-ldl")
                .redirectErrorStream(true).start();
        String output = new String(gcc.getInputStream().readAllBytes());
        assertTrue(gcc.waitFor(60, TimeUnit.SECONDS) && gcc.exitValue() == 0, "gcc failed: " + output);
    }

    @Test
    void withoutABinaryLogACrashErasesARowAnotherSessionHasReadAndTheServerIsRefused() throws Exception {
        Stall stall = new Stall();
        try (PrivateMariaDb server = startStallable(List.of(), stall); stall) {
            Optional<String> problem = DurableCommitsCheck.problem(settingsOf(server));
            assertTrue(problem.orElseThrow().contains("log_bin is OFF, not ON"));
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> DurableCommitsCheck.enforce(problem, true));
            assertTrue(refused.getMessage().contains("PAYONCE_DATABASE_DURABLE_COMMITS_REQUIRED=false"), refused.getMessage());
            DurableCommitsCheck.enforce(problem, false);

            try (Connection reader = server.connect(); Connection writer = server.connect()) {
                try {
                    prepare(reader);
                    stall.holdTheLog();
                    CompletableFuture<Void> commit = CompletableFuture.runAsync(() -> insertSecondRow(writer));

                    Await.until(() -> rows(reader), "1,2"::equals, Duration.ofSeconds(30), "the reader seeing the row being committed");
                    assertFalse(commit.isDone(), "the commit has not reached the redo log, and has not answered");

                    server.kill();
                } finally {
                    stall.close();
                }
                server.restart(Map.of());
            }
            try (Connection afterTheCrash = server.connect()) {
                assertEquals("1", rows(afterTheCrash), "the row the reader saw is gone");
            }
        }
    }

    /**
     * The commit is held inside its commit, at the log write of its prepare (InnoDB's own state
     * says so), and not shown; let go, it is shown and survives the crash. Such a server starts.
     */
    @Test
    void withTheBinaryLogACommitHeldBeforeItsLogWriteIsNotShown() throws Exception {
        Stall stall = new Stall();
        try (PrivateMariaDb server = startStallable(BINARY_LOG, stall); stall) {
            Optional<String> problem = DurableCommitsCheck.problem(settingsOf(server));
            assertEquals(Optional.empty(), problem);
            DurableCommitsCheck.enforce(problem, true);

            try (Connection reader = server.connect(); Connection writer = server.connect()) {
                CompletableFuture<Void> commit;
                try {
                    prepare(reader);
                    long writerId = connectionId(writer);
                    stall.holdTheLog();
                    commit = CompletableFuture.runAsync(() -> insertSecondRow(writer));

                    Await.until(() -> commitStep(reader, writerId), "Commit preparing"::equals, Duration.ofSeconds(30),
                            "the writer inside its commit, held at its prepare's log write");
                    for (int read = 0; read < 20; read++) {
                        assertEquals("1", rows(reader), "a commit not yet in the log is not shown");
                        Thread.sleep(50);
                    }
                    assertFalse(commit.isDone());
                } finally {
                    stall.close();
                }
                commit.get(30, TimeUnit.SECONDS);
                assertEquals("1,2", rows(reader));
                server.kill();
                server.restart(Map.of());
            }
            try (Connection afterTheCrash = server.connect()) {
                assertEquals("1,2", rows(afterTheCrash), "a row shown is a row kept");
            }
        }
    }

    @Test
    void theCheckNamesEachSettingAServerLacks() {
        assertTrue(DurableCommitsCheck.problem(Map.of("log_bin", "ON", "sync_binlog", "1", "innodb_flush_log_at_trx_commit", "1")).isEmpty());
        assertTrue(DurableCommitsCheck.problem(Map.of("log_bin", "ON", "sync_binlog", "1", "innodb_flush_log_at_trx_commit", "3")).isEmpty(),
                "3 flushes at the prepare and at the commit");
        assertTrue(DurableCommitsCheck.problem(Map.of("wsrep_on", "ON", "log_bin", "OFF", "innodb_flush_log_at_trx_commit", "1")).isEmpty(),
                "a Galera node shows a commit once every node holds its write set");

        String lazy = DurableCommitsCheck.problem(Map.of("log_bin", "ON", "sync_binlog", "0", "innodb_flush_log_at_trx_commit", "2"))
                .orElseThrow();
        assertTrue(lazy.contains("sync_binlog is 0, not 1") && lazy.contains("innodb_flush_log_at_trx_commit is 2, not 1"), lazy);
        assertFalse(lazy.contains("log_bin is"), lazy);
        String lazyGalera = DurableCommitsCheck.problem(Map.of("wsrep_on", "ON", "log_bin", "OFF", "innodb_flush_log_at_trx_commit", "2"))
                .orElseThrow();
        assertEquals(List.of("innodb_flush_log_at_trx_commit is 2, not 1"), named(lazyGalera), "a Galera node needs no binary log");
    }

    /** The settings a refusal names, between its colon and its first sentence's end. */
    private static List<String> named(String problem) {
        String settings = problem.substring(problem.indexOf(':') + 1, problem.indexOf(" a crash"));
        return Arrays.stream(settings.split(";")).map(String::strip).filter(setting -> !setting.isEmpty()).toList();
    }

    /** A server whose redo log's writes wait while {@code stall} holds them. */
    private static PrivateMariaDb startStallable(List<String> options, Stall stall) throws IOException, InterruptedException {
        return PrivateMariaDb.start(options, Map.of("LD_PRELOAD", STALL_LIBRARY.toString(), "STALL_LOG_WRITES", stall.file.toString()));
    }

    /**
     * The file whose presence holds the log's writes: created to hold them, deleted to let them go,
     * at the latest when the test ends, so that its server stops at once whatever the test's end.
     */
    private static final class Stall implements AutoCloseable {

        private final Path directory = Files.createTempDirectory(Path.of("/tmp"), "payonce-stall-");
        private final Path file = directory.resolve("stall");

        Stall() throws IOException {
        }

        void holdTheLog() throws IOException {
            Files.createFile(file);
        }

        @Override
        public void close() throws IOException {
            Files.deleteIfExists(file);
            Files.deleteIfExists(directory);
        }
    }

    private static Map<String, String> settingsOf(PrivateMariaDb server) throws SQLException {
        try (Connection connection = server.connect()) {
            return DurableCommitsCheck.settings(connection);
        }
    }

    /**
     * A table with one row, read once by {@code reader}; statistics are not recalculated in the
     * background, whose own log writes would hold the reader's table too.
     */
    private static void prepare(Connection reader) throws SQLException {
        try (Statement statement = reader.createStatement()) {
            statement.execute("SET GLOBAL innodb_stats_auto_recalc = 0");
            statement.execute("CREATE DATABASE t");
            statement.execute("CREATE TABLE t.x (id INT PRIMARY KEY) ENGINE=InnoDB STATS_PERSISTENT=0");
            statement.execute("INSERT INTO t.x VALUES (1)");
        }
        assertEquals("1", rows(reader));
    }

    private static void insertSecondRow(Connection writer) {
        try (Statement statement = writer.createStatement()) {
            statement.executeUpdate("INSERT INTO t.x VALUES (2)");
        } catch (SQLException e) {
            throw new IllegalStateException(e);
        }
    }

    private static long connectionId(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet id = statement.executeQuery("SELECT CONNECTION_ID()")) {
            id.next();
            return id.getLong(1);
        }
    }

    /** The server's state of connection {@code id}'s statement and InnoDB's of its transaction, as "Commit preparing". */
    private static String commitStep(Connection probe, long id) throws SQLException {
        try (PreparedStatement statement = probe.prepareStatement("""
                SELECT CONCAT(p.state, ' ', t.trx_operation_state) FROM information_schema.processlist p
                JOIN information_schema.innodb_trx t ON t.trx_mysql_thread_id = p.id WHERE p.id = ?""")) {
            statement.setLong(1, id);
            try (ResultSet step = statement.executeQuery()) {
                return step.next() ? step.getString(1) : null;
            }
        }
    }

    private static String rows(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SELECT GROUP_CONCAT(id ORDER BY id) FROM t.x")) {
            rows.next();
            return rows.getString(1);
        }
    }
}
