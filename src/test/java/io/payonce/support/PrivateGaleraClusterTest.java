package io.payonce.support;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What the Galera tests lean on, proved on one cluster: writes replicate, the proxy sends to n1 and
 * only while it is synced, a crashed node catches up incrementally, and the proxy moves to another
 * node within seconds of the writer's crash. The tests run in order, each on the cluster the one before left: starting a
 * cluster costs two full state transfers.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PrivateGaleraClusterTest {

    // The proxy marks a dead writer down on the first refused connect and hands that connection to
    // the next node at once; two failed health checks (about 1.5 s) are the slow path. Above 5 s the
    // proxy would be waiting on something else.
    private static final Duration FAILOVER_BOUND = Duration.ofSeconds(5);
    // A commit waits until the group has evicted the dead writer: suspected after 3 s of silence,
    // declared inactive after 6 s at most (node.cnf), plus a view change.
    private static final Duration FIRST_COMMIT_BOUND = Duration.ofSeconds(10);

    private static long classStarted;
    private static PrivateGaleraCluster cluster;

    @BeforeAll
    static void startCluster() throws Exception {
        classStarted = System.nanoTime();
        cluster = PrivateGaleraCluster.start();
        System.out.printf("Galera cluster of 3 and its proxy started in %d ms%n", millisSince(classStarted));
        execute(cluster.port(1), "CREATE DATABASE galera_probe");
        execute(cluster.port(1), "CREATE TABLE galera_probe.probe (id INT PRIMARY KEY, written_on VARCHAR(8) NOT NULL)");
    }

    @AfterAll
    static void stopCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
        System.out.printf("PrivateGaleraClusterTest took %d ms in all%n", millisSince(classStarted));
    }

    @Test
    @Order(1)
    void aRowCommittedOnOneNodeIsReadOnAnother() throws SQLException {
        execute(cluster.port(1), "INSERT INTO galera_probe.probe VALUES (1, 'n1')");

        try (Connection n3 = PrivateGaleraCluster.connect(cluster.port(3)); Statement statement = n3.createStatement()) {
            // A causal read: n3 applies every write set it has received before it answers.
            statement.execute("SET SESSION wsrep_sync_wait = 1");
            assertEquals("n1", writtenOn(statement, 1));
        }
    }

    @Test
    @Order(2)
    void theProxySendsToTheFirstNode() throws SQLException {
        assertEquals(1, cluster.writer());
    }

    @Test
    @Order(3)
    void aNodeOutOfSyncLosesTheWritesUntilItIsSyncedAgain() throws SQLException {
        // Desynced, n1 still answers every login: only the proxy's query tells it apart.
        long desynced = System.nanoTime();
        execute(cluster.port(1), "SET GLOBAL wsrep_desync = ON");
        Await.until(PrivateGaleraClusterTest::writerIfReachable, seen -> seen != null && seen == 2, Duration.ofSeconds(10),
                "the proxy sending to n2 while n1 is desynced");
        long movedAway = millisSince(desynced);

        long resynced = System.nanoTime();
        execute(cluster.port(1), "SET GLOBAL wsrep_desync = OFF");
        Await.until(PrivateGaleraClusterTest::writerIfReachable, seen -> seen != null && seen == 1, Duration.ofSeconds(10),
                "the proxy sending to n1 again once it is synced");
        System.out.printf("n1 desynced: writes moved to n2 after %d ms, back to n1 %d ms after it synced%n", movedAway, millisSince(resynced));
    }

    @Test
    @Order(4)
    void aCrashedNodeCatchesUpIncrementallyWithWhatItMissed() throws Exception {
        long killed = System.nanoTime();
        cluster.kill(2);
        Await.until(() -> cluster.status(1), status -> status.syncedInPrimaryOf(2), Duration.ofSeconds(20),
                "n1 in a primary component of 2 after n2's crash");
        System.out.printf("n2 killed: n1 and n3 a primary component of 2 after %d ms%n", millisSince(killed));
        execute(cluster.proxyPort(), "INSERT INTO galera_probe.probe VALUES (2, 'proxy')");

        long restarted = System.nanoTime();
        String rejoinLog = cluster.restart(2);
        System.out.printf("n2 restarted and synced in %d ms%n", millisSince(restarted));

        assertTrue(cluster.status(2).syncedInPrimaryOf(3), "n2 synced in a component of 3");
        // The joiner runs the state transfer script either way (and Galera logs "SST received" either
        // way); only a full transfer has the script prepare a donor's backup.
        assertTrue(rejoinLog.contains("mariabackup IST completed on joiner"), "n2 caught up by IST; it logged:\n" + rejoinLog);
        assertFalse(rejoinLog.contains("Preparing the backup"), "n2 received no full state transfer; it logged:\n" + rejoinLog);
        try (Connection n2 = PrivateGaleraCluster.connect(cluster.port(2)); Statement statement = n2.createStatement()) {
            assertEquals("proxy", writtenOn(statement, 2));
        }
    }

    @Test
    @Order(5)
    void whenTheWriterCrashesTheProxyReachesAnotherNodeWithinSeconds() throws Exception {
        int writer = cluster.writer();
        long killed = System.nanoTime();
        cluster.kill(writer);

        int next = Await.until(PrivateGaleraClusterTest::writerIfReachable, seen -> seen != null && seen != writer,
                Duration.ofSeconds(30), "a new connection through the proxy reaching a node other than n" + writer);
        Duration window = Duration.ofNanos(System.nanoTime() - killed);
        execute(cluster.proxyPort(), "INSERT INTO galera_probe.probe VALUES (3, 'proxy')");
        Duration firstCommit = Duration.ofNanos(System.nanoTime() - killed);
        System.out.printf("n%d killed: a new connection reached n%d after %d ms, a write committed there after %d ms%n",
                writer, next, window.toMillis(), firstCommit.toMillis());

        assertNotEquals(writer, next);
        assertTrue(window.compareTo(FAILOVER_BOUND) < 0, "failover took " + window.toMillis() + " ms");
        assertTrue(firstCommit.compareTo(FIRST_COMMIT_BOUND) < 0, "the first commit after the crash took " + firstCommit.toMillis() + " ms");
        try (Connection node = PrivateGaleraCluster.connect(cluster.port(next)); Statement statement = node.createStatement()) {
            assertEquals("proxy", writtenOn(statement, 3));
        }
    }

    private static Integer writerIfReachable() {
        try {
            return cluster.writer();
        } catch (SQLException refusedOrClosed) {
            return null;
        }
    }

    private static String writtenOn(Statement statement, int id) throws SQLException {
        try (ResultSet row = statement.executeQuery("SELECT written_on FROM galera_probe.probe WHERE id = " + id)) {
            return row.next() ? row.getString(1) : null;
        }
    }

    private static void execute(int port, String sql) throws SQLException {
        try (Connection connection = PrivateGaleraCluster.connect(port); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    private static long millisSince(long nanos) {
        return (System.nanoTime() - nanos) / 1_000_000;
    }
}
