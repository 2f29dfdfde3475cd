package io.payonce.db;

import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Database;
import io.payonce.support.InstanceApi;
import io.payonce.support.PackagedInstance;
import io.payonce.support.PaysThroughFaults;
import io.payonce.support.PrivateGaleraCluster;
import io.payonce.support.PrivateRedis;
import io.payonce.support.Replays;
import io.payonce.support.Tokens;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * payonce, packaged, on a three-node MariaDB Galera cluster of the test's own (PrivateGaleraCluster),
 * through the proxy that sends every connection to one writer, as README's "Running on a Galera
 * cluster" says to deploy it. The tests run in order on one cluster: starting one costs two full
 * state transfers. Each fault is injected into the cluster, and each proof is read from the
 * cluster's rows: one payment per order, every acknowledged pay still there, and no answer a
 * client could not act on (a 500).
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class GaleraIT {

    private static final String DATABASE = "payonce_galera";
    private static final long FUNDS = 1_000_000;
    private static final long PRICE = 100;
    // The proxy hands a refused connection to the next node at once; the first commit there waits for
    // the group to evict the dead node: suspected after 5 s, inactive after 10 s at most (node.cnf).
    // Well past that, payonce would be waiting on something else, such as a pool's idle timeout.
    private static final Duration FAILOVER_BOUND = Duration.ofSeconds(15);

    private static PrivateGaleraCluster cluster;
    private static Database db;
    private static final List<PackagedInstance> instances = Collections.synchronizedList(new ArrayList<>());
    /** The instance behind the proxy, which every test after the first pays through. */
    private static PackagedInstance viaProxy;
    private static String user;
    private static String bearer;

    private final ExecutorService clients = Executors.newFixedThreadPool(8);

    @AfterEach
    void stopClients() {
        clients.shutdownNow();
    }

    @BeforeAll
    static void startCluster() throws Exception {
        long started = System.nanoTime();
        cluster = PrivateGaleraCluster.start();
        db = Database.at(cluster.proxyPort(), DATABASE);
        System.out.printf("GaleraIT: cluster of 3 and its proxy started in %d ms%n", Duration.ofNanos(System.nanoTime() - started).toMillis());
    }

    @AfterAll
    static void stopCluster() throws Exception {
        for (PackagedInstance instance : instances) {
            instance.close();
        }
        if (cluster != null) {
            cluster.close();
        }
    }

    /**
     * What every later test leans on: a row committed on one node is read on another, and the proxy
     * sends to n1 and only while it is synced (desynced, it still answers every login; only the
     * proxy's query tells it apart).
     */
    @Test
    @Order(0)
    void theClusterReplicatesAndTheProxySendsToOneSyncedWriter() throws Exception {
        cluster.execute(1, "CREATE DATABASE galera_probe");
        cluster.execute(1, "CREATE TABLE galera_probe.probe (id INT PRIMARY KEY, written_on VARCHAR(8) NOT NULL)");
        cluster.execute(1, "INSERT INTO galera_probe.probe VALUES (1, 'n1')");
        try (Connection n3 = PrivateGaleraCluster.connect(cluster.port(3)); Statement statement = n3.createStatement()) {
            // A causal read: n3 applies every write set it has received before it answers.
            statement.execute("SET SESSION wsrep_sync_wait = 1");
            try (ResultSet row = statement.executeQuery("SELECT written_on FROM galera_probe.probe WHERE id = 1")) {
                assertTrue(row.next());
                assertEquals("n1", row.getString(1));
            }
        }
        assertEquals(1, cluster.writer());

        cluster.execute(1, "SET GLOBAL wsrep_desync = ON");
        Await.until(GaleraIT::writerIfReachable, seen -> seen != null && seen == 2, Duration.ofSeconds(10), "the proxy sending to n2 while n1 is desynced");
        cluster.execute(1, "SET GLOBAL wsrep_desync = OFF");
        Await.until(GaleraIT::writerIfReachable, seen -> seen != null && seen == 1, Duration.ofSeconds(10), "the proxy sending to n1 again once it is synced");
    }

    /**
     * A Galera node refuses GET_LOCK, so Flyway locks its history table row by row instead, a lock
     * each migration's DDL releases: without payonce's migration lease (MigrationLease) the second
     * instance ran a migration the first was still running. Each instance holds the lease alone, each
     * version is applied once, and every table has the primary key Galera needs to apply its rows'
     * changes on the other nodes.
     */
    @Test
    @Order(1)
    void instancesStartingTogetherOnAnEmptyDatabaseMigrateItOnce() throws Exception {
        List<CompletableFuture<PackagedInstance>> starting = List.of(
                CompletableFuture.supplyAsync(() -> start("galera-a", cluster.proxyPort(), Map.of()), clients),
                CompletableFuture.supplyAsync(() -> start("galera-b", cluster.proxyPort(), Map.of()), clients));
        viaProxy = starting.get(0).get(90, TimeUnit.SECONDS);
        PackagedInstance other = starting.get(1).get(90, TimeUnit.SECONDS);

        LocalTime[] leaseOfA = leaseHeld(viaProxy);
        LocalTime[] leaseOfB = leaseHeld(other);
        assertTrue(leaseOfA[1].isBefore(leaseOfB[0]) || leaseOfB[1].isBefore(leaseOfA[0]),
                "each instance held the migration lease alone: " + List.of(leaseOfA) + " and " + List.of(leaseOfB));
        List<String> applied = db.strings("SELECT version FROM flyway_schema_history WHERE version IS NOT NULL AND success = 1 ORDER BY installed_rank");
        assertEquals(applied.stream().distinct().toList(), applied, "each version applied once");
        assertEquals(migrationsInTheBuild(), applied.size(), "every migration applied: " + applied);
        assertEquals(List.of(), db.strings("""
                SELECT t.table_name FROM information_schema.tables t
                WHERE t.table_schema = ? AND t.table_type = 'BASE TABLE' AND NOT EXISTS (
                    SELECT 1 FROM information_schema.table_constraints c
                    WHERE c.table_schema = t.table_schema AND c.table_name = t.table_name AND c.constraint_type = 'PRIMARY KEY')""", DATABASE),
                "tables without a primary key");

        user = "galera-" + UUID.randomUUID();
        bearer = Tokens.user(user);
        InstanceApi.fund(viaProxy.port(), user, FUNDS);
        Response paid = pay(other.port(), InstanceApi.newOrder(other.port(), bearer, PRICE), newKey());
        assertEquals(201, paid.statusCode(), paid.asString());
        other.close();
        instances.remove(other);
    }

    /**
     * A second writer on another node, as two instances behind two proxies that disagree would be:
     * the same key sent to both at once. Neither node sees the other's uncommitted claim, so both pay
     * locally; certification lets the first COMMIT through and fails the other's with 1213, whose
     * retry then meets the committed claim and replays its answer. The account row, debited by both
     * for different orders at once, conflicts the same way.
     */
    @Test
    @Order(2)
    void theSameKeyOnTwoNodesAtOncePaysOnceAndCertificationFailuresAreRetried() throws Exception {
        PrivateRedis ownLock = new PrivateRedis();
        ownLock.start();
        try {
            // Its own Redis: a shared pay lock would turn the twin away before it reached the database.
            PackagedInstance onSecondNode = start("galera-second-writer", cluster.port(2), Map.of("PAYONCE_REDIS_PORT", Integer.toString(PrivateRedis.port())));
            long conflictsBefore = payConflicts(viaProxy) + payConflicts(onSecondNode);
            long balanceBefore = db.balance(user);
            int orders = 30;
            CyclicBarrier together = new CyclicBarrier(2);
            for (int i = 0; i < orders; i++) {
                long order = InstanceApi.newOrder(viaProxy.port(), bearer, PRICE);
                String key = newKey();
                CompletableFuture<Response> first = CompletableFuture.supplyAsync(() -> payTogether(together, viaProxy.port(), order, key), clients);
                CompletableFuture<Response> second = CompletableFuture.supplyAsync(() -> payTogether(together, onSecondNode.port(), order, key), clients);
                Response one = first.get(60, TimeUnit.SECONDS);
                Response other = second.get(60, TimeUnit.SECONDS);
                assertEquals(201, one.statusCode(), one.asString());
                Replays.assertSameAnswer(one, other);
                assertTrue(Replays.isRepeat(one) != Replays.isRepeat(other), "one pays, the other repeats it");
                assertEquals(1, db.payments(order), "order " + order);
            }
            long conflicts = payConflicts(viaProxy) + payConflicts(onSecondNode) - conflictsBefore;

            System.out.printf("GaleraIT: %d keys sent to two nodes at once, %d pay transactions failed by a conflict and ran again%n", orders, conflicts);
            assertEquals(balanceBefore - orders * PRICE, db.balance(user));
            assertTrue(conflicts > 0, "the two writers never met in certification: the test proved nothing");
            onSecondNode.close();
            instances.remove(onSecondNode);
        } finally {
            ownLock.stop();
        }
    }

    /**
     * The writer told to reject queries, as an operator drains a node, answers 1047, as a node out of
     * the primary component does, until the proxy's check takes it out (about a second): a pay that
     * meets it is retried, or answered 503 with Retry-After, and its key pays once later. Never a 500.
     * Told to take queries again, it takes the writes back.
     */
    @Test
    @Order(3)
    void aNodeThatRefusesQueriesIsRetriedOrAnswered503NeverA500() throws Exception {
        PaysThroughFaults run = PaysThroughFaults.start(clients, 4, viaProxy.port(), user, db);
        Thread.sleep(1000);
        cluster.execute(1, "SET GLOBAL wsrep_reject_queries = ALL");
        Thread.sleep(4000);
        assertEquals(2, cluster.writer(), "the proxy took the rejecting node out");
        cluster.execute(1, "SET GLOBAL wsrep_reject_queries = NONE");
        Await.until(cluster::writer, writer -> writer == 1, Duration.ofSeconds(10), "n1 taking the writes back");
        Thread.sleep(1000);
        run.stop();

        run.refusalWindow("GaleraIT, the writer rejecting queries");
        run.assertEveryKeyPaidOnce();
        assertTrue(Files.readString(viaProxy.log()).contains("errorCode=1047"), "payonce never met the fault: the test proved nothing");
    }

    /**
     * The writer SIGKILLed under load: the proxy sends new connections to the next node at once, and
     * its first commit waits until the group has evicted the dead node (suspected after 5 s of
     * silence, node.cnf). Every pay acknowledged before the crash is still there, and every key pays
     * once. The node then rejoins by incremental state transfer and takes the writes back.
     */
    @Test
    @Order(4)
    void theWriterKilledUnderLoadLosesNoAcknowledgedPay() throws Exception {
        PaysThroughFaults run = PaysThroughFaults.start(clients, 4, viaProxy.port(), user, db);
        Thread.sleep(1000);
        cluster.kill(1);
        Thread.sleep(FAILOVER_BOUND.plusSeconds(2).toMillis());
        run.stop();

        Duration refused = run.refusalWindow("GaleraIT, the writer killed");
        run.assertEveryKeyPaidOnce();
        assertEquals(2, cluster.writer(), "the first backup took the writes");
        assertTrue(refused.compareTo(FAILOVER_BOUND) < 0, "pays refused for " + refused.toMillis() + " ms");

        assertRejoinsIncrementally(1);
        assertEquals(1, cluster.writer());
        long order = InstanceApi.newOrder(viaProxy.port(), bearer, PRICE);
        String key = newKey();
        Response afterRejoin = Api.untilSettled(() -> pay(viaProxy.port(), order, key));
        assertEquals(201, afterRejoin.statusCode(), afterRejoin.asString());
    }

    /** A node that takes no writes killed under load: nothing is refused, and it catches up on rejoining. */
    @Test
    @Order(5)
    void aNodeThatTakesNoWritesKilledUnderLoadCostsNoPay() throws Exception {
        PaysThroughFaults run = PaysThroughFaults.start(clients, 4, viaProxy.port(), user, db);
        Thread.sleep(1000);
        cluster.kill(3);
        Thread.sleep(8_000);
        run.stop();

        run.refusalWindow("GaleraIT, a node that takes no writes killed");
        run.assertEveryKeyPaidOnce();
        assertRejoinsIncrementally(3);
        assertEquals(db.count("SELECT COUNT(*) FROM pay_record"), Database.at(cluster.port(3), DATABASE).count("SELECT COUNT(*) FROM pay_record"),
                "n3 holds every payment made while it was down");
    }

    private static void assertRejoinsIncrementally(int node) throws Exception {
        String rejoinLog = cluster.restart(node);
        // The joiner runs the state transfer script either way (and Galera logs "SST received" either
        // way); only a full transfer has the script prepare a donor's backup.
        assertTrue(rejoinLog.contains("mariabackup IST completed on joiner"), "n" + node + " caught up by IST; it logged:\n" + rejoinLog);
        assertFalse(rejoinLog.contains("Preparing the backup"), "n" + node + " received no full state transfer; it logged:\n" + rejoinLog);
    }

    private static Integer writerIfReachable() {
        try {
            return cluster.writer();
        } catch (SQLException refusedOrClosed) {
            return null;
        }
    }

    /** When {@code instance} took the migration lease and gave it back, as it logged them. */
    private static LocalTime[] leaseHeld(PackagedInstance instance) throws IOException {
        List<String> lines = Files.readAllLines(instance.log());
        return new LocalTime[] {loggedAt(lines, "Took the migration lease"), loggedAt(lines, "Released the migration lease")};
    }

    private static LocalTime loggedAt(List<String> lines, String message) {
        return lines.stream().filter(line -> line.contains(message)).findFirst()
                .map(line -> LocalTime.parse(line.substring(0, line.indexOf(' '))))
                .orElseThrow(() -> new AssertionError("never logged: " + message));
    }

    /**
     * The pay transactions of {@code instance} that a conflict failed and that ran again: pipelined
     * ones whose COMMIT failed (certification) or whose statement failed (a brute-force abort), and
     * the 1213s its plain transactions logged. The outbox relays and recovery jobs of the two
     * instances, on two nodes, conflict too: the cluster's own counters would count theirs.
     */
    private static long payConflicts(PackagedInstance instance) throws IOException {
        String metrics = RestAssured.given().port(instance.managementPort()).get("/q/metrics").asString();
        long pipelined = metrics.lines()
                .filter(line -> line.startsWith("payonce_pipelined_transactions_total{")
                        && (line.contains("outcome=\"commit_failed\"") || line.contains("outcome=\"failed\"")))
                .mapToLong(line -> (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
                .sum();
        long plain = Files.readAllLines(instance.log()).stream()
                .filter(line -> line.contains("retrying with the same command") && line.contains("errorCode=1213"))
                .count();
        return pipelined + plain;
    }

    /** Sends the pay once both senders are ready, and again while it is refused for now (503) or its twin holds the key (409). */
    private static Response payTogether(CyclicBarrier together, int port, long order, String key) {
        try {
            together.await(30, TimeUnit.SECONDS);
            Response answer = pay(port, order, key);
            for (int tries = 0; (answer.statusCode() == 503 || answer.statusCode() == 409) && tries < 100; tries++) {
                Thread.sleep(50);
                answer = pay(port, order, key);
            }
            return answer;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static Response pay(int port, long order, String key) {
        return InstanceApi.pay(port, bearer, order, key);
    }

    private static String newKey() {
        return "k-" + UUID.randomUUID();
    }

    private static long migrationsInTheBuild() throws IOException {
        try (var files = Files.list(Path.of("src/main/resources/db/migration"))) {
            return files.filter(file -> file.getFileName().toString().matches("V\\d+__.*\\.sql")).count();
        }
    }

    private static PackagedInstance start(String name, int databasePort, Map<String, String> environment) {
        Map<String, String> env = new HashMap<>(environment);
        env.put("PAYONCE_DB_PORT", Integer.toString(databasePort));
        try {
            PackagedInstance instance = PackagedInstance.start(name, DATABASE, false, env);
            instances.add(instance);
            return instance;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
