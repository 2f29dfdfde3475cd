package io.payonce.db;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.GetResponse;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Broker;
import io.payonce.support.Database;
import io.payonce.support.InstanceApi;
import io.payonce.support.Management;
import io.payonce.support.NodeGate;
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
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestMethodOrder;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * payonce, packaged, on a three-node MariaDB Galera cluster of the test's own (PrivateGaleraCluster),
 * through the proxy that sends every connection to one writer, as "Running on a Galera cluster"
 * (docs/operations/scaling.md) says to deploy it. The tests run in order on one cluster: starting one
 * costs two full state transfers. Each fault is injected into the cluster, and each proof is read from
 * the cluster's rows: one payment per order, every acknowledged pay still there, and no answer a client
 * could not act on (a 500).
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
    /** Pays a run is seen to make before a fault and after it, so that its proof covers both sides. */
    private static final int PAYS_AROUND_A_FAULT = 10;
    // The proxy moves the writes after two failed checks and gives them back after five good ones,
    // half a second apart (about 3 s); a check that times out on a loaded machine starts a count again.
    private static final Duration PROXY_CHECKS = Duration.ofSeconds(30);
    private static final ObjectMapper JSON = new ObjectMapper();

    private static PrivateGaleraCluster cluster;
    private static Database db;
    private static final List<PackagedInstance> instances = Collections.synchronizedList(new ArrayList<>());
    /** The instance behind the proxy, which every test after the first pays through. */
    private static PackagedInstance viaProxy;
    private static String user;
    private static String bearer;

    private final ExecutorService clients = Executors.newFixedThreadPool(8);
    private final List<PaysThroughFaults> runs = new ArrayList<>();

    /**
     * The tests of orders 2 to 8 pay through the instance the migration test started behind the proxy,
     * for the buyer it funded once its migration checks passed. If it did not get that far, each of them
     * is skipped saying so, rather than failed with a NullPointerException that buries the cause; the
     * tests after them start instances of their own and run.
     */
    @BeforeEach
    void theMigrationTestStartedItsInstances(TestInfo test) {
        int order = test.getTestMethod().orElseThrow().getAnnotation(Order.class).value();
        assumeTrue(order < 2 || order > 8 || bearer != null,
                "instancesStartingTogetherOnAnEmptyDatabaseMigrateItOnce did not start its instances and fund their buyer");
    }

    /**
     * A test that failed while its pays ran leaves none paying into the next test's proof, nor an
     * instance of its own writing through another node.
     */
    @AfterEach
    void stopClientsAndTheTestsOwnInstances() throws InterruptedException {
        try {
            for (PaysThroughFaults run : runs) {
                stopQuietly(run);
            }
        } finally {
            clients.shutdownNow();
            closeAllBut(viaProxy);
        }
    }

    private static void closeAllBut(PackagedInstance kept) throws InterruptedException {
        synchronized (instances) {
            for (PackagedInstance instance : instances) {
                if (instance != kept) {
                    instance.close();
                }
            }
            instances.removeIf(instance -> instance != kept);
        }
    }

    /** A run that failed has told its test so already. */
    private static void stopQuietly(PaysThroughFaults run) {
        try {
            run.stop();
        } catch (Exception reportedByItsTest) {
            // The test's own stop() threw this first.
        }
    }

    @BeforeAll
    static void startCluster() throws Exception {
        long started = System.nanoTime();
        cluster = PrivateGaleraCluster.start();
        // Created once here, as an operator does on a cluster: the instances do not (PAYONCE_DB_CREATE_DATABASE).
        cluster.execute(1, "CREATE DATABASE " + DATABASE);
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
        assertEquals("n1", causalRead(3, "SELECT written_on FROM galera_probe.probe WHERE id = 1"));
        assertEquals(1, cluster.writer());

        cluster.execute(1, "SET GLOBAL wsrep_desync = ON");
        try {
            awaitWriter(2, PROXY_CHECKS, "the proxy sending to n2 while n1 is desynced");
        } finally {
            cluster.execute(1, "SET GLOBAL wsrep_desync = OFF");
        }
        awaitWriter(1, PROXY_CHECKS, "the proxy sending to n1 again once it is synced");
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
        System.out.printf("migration lease held by instance A %s-%s, by instance B %s-%s%n", leaseOfA[0], leaseOfA[1], leaseOfB[0], leaseOfB[1]);
        assertTrue(!leaseOfA[1].isAfter(leaseOfB[0]) || !leaseOfB[1].isAfter(leaseOfA[0]),
                "each instance held the migration lease alone: " + List.of(leaseOfA) + " and " + List.of(leaseOfB));
        assertEquals(List.of("0"), db.strings("SELECT version FROM flyway_schema_history WHERE type = 'BASELINE'"),
                "Flyway's history created once, under the lease, as a baseline below every migration");
        List<String> applied = db.strings("SELECT version FROM flyway_schema_history WHERE type <> 'BASELINE' AND success = 1 ORDER BY installed_rank");
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
            // Its own Redis: a shared pay lock would turn the twin away before it reached the database. Its
            // pay held at the gate below waits for n1's commit to reach n2: beyond the test profile's 1 and 2 s.
            PackagedInstance onSecondNode = start("galera-second-writer", cluster.port(2), Map.of(
                    "PAYONCE_REDIS_PORT", Integer.toString(PrivateRedis.port()),
                    "_TEST_PAYONCE_DATABASE_LOCK_WAIT_TIMEOUT_SECONDS", "30",
                    "_TEST_PAYONCE_DATABASE_STATEMENT_TIMEOUT_SECONDS", "40"));
            long conflictsBefore = payConflicts(viaProxy) + payConflicts(onSecondNode);
            long balanceBefore = db.balance(user);
            aPayHeldOnTheSecondNodeWhileTheFirstCommitsTheSameKey(onSecondNode);
            assertTrue(payConflicts(viaProxy) + payConflicts(onSecondNode) > conflictsBefore,
                    "set-up: the pay held on n2 failed by the conflict with n1's commit and ran again");
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

            System.out.printf("GaleraIT: %d keys sent to two nodes at once, and one held; %d pay transactions failed by a conflict and ran again%n",
                    orders, conflicts);
            assertEquals(balanceBefore - (orders + 1) * PRICE, db.balance(user));
        } finally {
            ownLock.stop();
        }
    }

    /**
     * The meeting the pairs above hope for, made to happen: a key's pay through n2 held after its
     * writes, before its COMMIT (a gate on its event, written last), while the same key pays through
     * n1. Applying n1's commit on n2 aborts the held transaction, which runs again and meets the
     * committed claim: it replays n1's answer, and the order is paid once.
     */
    private void aPayHeldOnTheSecondNodeWhileTheFirstCommitsTheSameKey(PackagedInstance onSecondNode) throws Exception {
        long order = InstanceApi.newOrder(viaProxy.port(), bearer, PRICE);
        String key = newKey();
        try (NodeGate gate = NodeGate.before(cluster, DATABASE, "INSERT", "outbox_event", "NEW.idem_key = '" + key + "'")) {
            gate.hold(2);
            CompletableFuture<Response> held = CompletableFuture.supplyAsync(() -> pay(onSecondNode.port(), order, key), clients);
            String heldTransaction = gate.awaitWaiting(2, Duration.ofSeconds(20));
            Response first = pay(viaProxy.port(), order, key);
            assertEquals(201, first.statusCode(), first.asString());
            gate.awaitEnded(2, heldTransaction, Duration.ofSeconds(20));
            gate.release(2);
            Replays.assertReplayOf(first, held.get(60, TimeUnit.SECONDS));
        }
        assertEquals(1, db.payments(order), "order " + order);
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
        long refusalsBefore = logged(viaProxy, "errorCode=1047");
        PaysThroughFaults run = paysThroughTheProxy();
        run.awaitPaid(PAYS_AROUND_A_FAULT, FAILOVER_BOUND, "set-up: the run paying before n1 rejects queries");
        // The proxy's checks held until payonce has met the refusals, which they would end within a second.
        cluster.holdProxyChecks(1);
        cluster.execute(1, "SET GLOBAL wsrep_reject_queries = ALL");
        try {
            awaitRefusalLogged(refusalsBefore, "payonce meeting the node that rejects queries");
            cluster.resumeProxyChecks(1);
            awaitWriter(2, PROXY_CHECKS, "the proxy taking the rejecting node out");
        } finally {
            cluster.resumeProxyChecks(1);
            cluster.execute(1, "SET GLOBAL wsrep_reject_queries = NONE");
        }
        // The proxy closes the sessions it had sent to n2 as n1 comes back, perhaps the look's own.
        awaitWriter(1, PROXY_CHECKS, "n1 taking the writes back");
        run.awaitPaid(PAYS_AROUND_A_FAULT, FAILOVER_BOUND, "the run paying through n1 again");
        run.stop();

        run.refusalWindow("GaleraIT, the writer rejecting queries");
        run.assertEveryKeyPaidOnce();
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
        PaysThroughFaults run = paysThroughTheProxy();
        run.awaitPaid(PAYS_AROUND_A_FAULT, FAILOVER_BOUND, "set-up: the run paying before the writer's kill");
        cluster.kill(1);
        run.awaitPaid(PAYS_AROUND_A_FAULT, FAILOVER_BOUND.multipliedBy(2), "the run paying through the next writer");
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
        PaysThroughFaults run = paysThroughTheProxy();
        run.awaitPaid(PAYS_AROUND_A_FAULT, FAILOVER_BOUND, "set-up: the run paying before n3's kill");
        cluster.kill(3);
        // Through the eviction, not only the kill: the group goes on without n3 once it has suspected it.
        Await.until(() -> cluster.status(1).clusterSize() == 2, FAILOVER_BOUND.multipliedBy(2), "set-up: n3 evicted from the group");
        run.awaitPaid(PAYS_AROUND_A_FAULT, FAILOVER_BOUND, "the run paying once n3 was evicted");
        run.stop();

        run.refusalWindow("GaleraIT, a node that takes no writes killed");
        run.assertEveryKeyPaidOnce();
        assertRejoinsIncrementally(3);
        assertEquals(paymentsOn(1), paymentsOn(3), "n3 holds every payment made while it was down");
    }

    /**
     * The writer cut off from the other two, as a network partition would (gmcast.isolate closes its
     * group connections and refuses new ones), rather than killed: it stays up and answers logins, but
     * once the group has evicted it, it is a component of one, not primary, and refuses with 1047. The
     * proxy's check sees that and sends to the next node, whose side of the cut is primary. A pay
     * caught on the cut-off node is retried or answered 503, never 500, and pays once; the node
     * reconnected catches up and takes the writes back.
     */
    @Test
    @Order(6)
    void theWriterCutOffFromTheOthersLosesNoAcknowledgedPay() throws Exception {
        long refusalsBefore = logged(viaProxy, "errorCode=1047");
        PaysThroughFaults run = paysThroughTheProxy();
        run.awaitPaid(PAYS_AROUND_A_FAULT, FAILOVER_BOUND, "set-up: the run paying before n1 is cut off");
        // The proxy's checks held until payonce has met the cut-off node's refusals, as a proxy slower
        // to notice would let it: they would otherwise take the node out as it leaves the primary component.
        cluster.holdProxyChecks(1);
        cluster.execute(1, "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=1'");
        try {
            awaitRefusalLogged(refusalsBefore, "payonce meeting the cut-off node, out of the primary component");
            cluster.resumeProxyChecks(1);
            awaitWriter(2, FAILOVER_BOUND, "the proxy sending to n2 once n1 is out of the primary component");
            run.awaitPaid(PAYS_AROUND_A_FAULT, FAILOVER_BOUND, "the run paying through n2 while n1 is cut off");
        } finally {
            cluster.resumeProxyChecks(1);
            cluster.execute(1, "SET GLOBAL wsrep_provider_options = 'gmcast.isolate=0'");
        }
        awaitWriter(1, Duration.ofSeconds(60), "n1, reconnected, taking the writes back");
        run.awaitPaid(PAYS_AROUND_A_FAULT, FAILOVER_BOUND, "the run paying through n1 again");
        run.stop();

        Duration refused = run.refusalWindow("GaleraIT, the writer cut off from the others");
        run.assertEveryKeyPaidOnce();
        assertTrue(refused.compareTo(FAILOVER_BOUND) < 0, "pays refused for " + refused.toMillis() + " ms");
        assertEquals(paymentsOn(2), paymentsOn(1), "n1 holds every payment made through n2 while it was cut off");
    }

    /** The relay runs {@code instance} has ended so far, done or failed, from its metrics. */
    private static double relayRuns(PackagedInstance instance) {
        String metrics = instance.metrics();
        return Management.sample(metrics, "payonce_outbox_runs_total{outcome=\"done\"}")
                + Management.sample(metrics, "payonce_outbox_runs_total{outcome=\"failed\"}");
    }

    /** How many statements reading the orders table another session runs on the node of {@code statement}. */
    private static long readingOrdersOn(Statement statement) throws SQLException {
        try (ResultSet count = statement.executeQuery(
                "SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE ID <> CONNECTION_ID() AND INFO LIKE '%FROM orders o%'")) {
            count.next();
            return count.getLong(1);
        }
    }

    /** Until the instance behind the proxy has logged a 1047 beyond the {@code before} it had logged. */
    private static void awaitRefusalLogged(long before, String awaited) {
        Await.until(() -> logged(viaProxy, "errorCode=1047") > before, FAILOVER_BOUND.multipliedBy(2), "set-up: " + awaited);
    }

    /**
     * A node that has received a commit and not yet applied it, as the next writer may be right after
     * a failover: here n2, whose applying a held FLUSH TABLES WITH READ LOCK pauses. An instance
     * reading through n2 waits until n2 has applied the pay made through n1 (wsrep_sync_wait, on by
     * default) rather than answer from before it: the order reads PAID, and the pay's retry replays
     * the first answer. With PAYONCE_DB_SYNC_WAIT=0 the order read UNPAID. That instance's statement
     * bound is well beyond the hold: a read whose wait outlasts max_statement_time may be interrupted
     * once its node has applied the commit, and with the test profile's 2 s it once was (a 503 in CI).
     */
    @Test
    @Order(7)
    void aReadOnANodeThatHasNotAppliedTheLastCommitWaitsForIt() throws Exception {
        PackagedInstance onSecondNode = start("galera-lagging-reader", cluster.port(2),
                Map.of("_TEST_PAYONCE_DATABASE_STATEMENT_TIMEOUT_SECONDS", "10"));
        long order = InstanceApi.newOrder(viaProxy.port(), bearer, PRICE);
        assertEquals("UNPAID", InstanceApi.order(onSecondNode.port(), bearer, order).jsonPath().getString("status"));
        String key = newKey();
        Response paid;
        CompletableFuture<Response> read;
        CompletableFuture<Response> retried;
        try (Connection n2 = PrivateGaleraCluster.connect(cluster.port(2)); Statement statement = n2.createStatement()) {
            statement.execute("FLUSH TABLES WITH READ LOCK");
            paid = pay(viaProxy.port(), order, key);
            assertEquals(201, paid.statusCode(), paid.asString());
            try (ResultSet onN2 = statement.executeQuery("SELECT COUNT(*) FROM " + DATABASE + ".pay_record WHERE order_id = " + order)) {
                assertTrue(onN2.next());
                assertEquals(0, onN2.getLong(1), "set-up: n2 has not applied the pay while its applying is held");
            }
            read = CompletableFuture.supplyAsync(() -> InstanceApi.order(onSecondNode.port(), bearer, order), clients);
            // Seen on n2, not given time to get there: a read that answered from before the pay is caught here, or,
            // had it not yet answered, by the status it reads once n2 applies the pay. The retried pay reads the
            // orders table too, so it is sent only once the read has been seen.
            Await.until(() -> read.isDone() || readingOrdersOn(statement) > 0, Duration.ofSeconds(30), "set-up: the order's read reaching n2");
            assertFalse(read.isDone(), "n2 answered before applying the pay: " + (read.isDone() ? read.get().asString() : ""));
            retried = CompletableFuture.supplyAsync(() -> pay(onSecondNode.port(), order, key), clients);
            Await.until(() -> retried.isDone() || readingOrdersOn(statement) > 1, Duration.ofSeconds(30), "set-up: the retried pay reaching n2");
            statement.execute("UNLOCK TABLES");
        }
        Response afterApplying = read.get(30, TimeUnit.SECONDS);
        assertEquals(200, afterApplying.statusCode(), afterApplying.asString());
        assertEquals("PAID", afterApplying.jsonPath().getString("status"));
        Replays.assertReplayOf(paid, retried.get(30, TimeUnit.SECONDS));
        assertEquals(1, db.payments(order));
    }

    /**
     * Two outbox relays on two nodes, as two instances behind two proxies that disagree about the
     * writer would run them: the row locks that keep one relay at a time on one node hold nothing
     * across nodes, so both may publish the same events, and certification fails the later one's
     * marking of them sent. Each order is paid through one instance and refunded through the other:
     * every event is delivered, duplicates carry the event id a consumer drops them by, and each
     * order's payment event comes before its refund event: the refund's transaction read the paid
     * order only once its node had applied the payment (wsrep_sync_wait, or certification failing it
     * otherwise), and an applied row raises the node's auto-increment counter, so the refund's event
     * got the higher id; and a relay marks an event sent only once the broker has confirmed it.
     *
     * <p>That both relays publish one event is made to happen, not hoped for: the
     * relays on both nodes are held before marking anything sent ({@link NodeGate}), an order is paid,
     * the relay on n2 publishes its event and waits; the relay on n1, let go, publishes it too and
     * marks it sent, and applying that marking on n2 aborts the held relay's transaction there.
     */
    @Test
    @Order(8)
    void relaysOnTwoNodesDeliverEveryEventAndEachOrdersEventsInOrder() throws Exception {
        String relayUser = "galera-relays-" + UUID.randomUUID();
        String relayBearer = Tokens.user(relayUser);
        InstanceApi.fund(viaProxy.port(), relayUser, FUNDS);
        try (Broker broker = Broker.connect()) {
            String events = broker.temporaryQueueOn(Broker.EVENTS, "#");
            // Its relay waits at the gate until n1's marking reaches n2: well beyond the test profile's bounds of 1 and 2 s.
            PackagedInstance onSecondNode = start("galera-second-relay", cluster.port(2), Map.of(
                    "_TEST_PAYONCE_DATABASE_LOCK_WAIT_TIMEOUT_SECONDS", "30",
                    "_TEST_PAYONCE_DATABASE_STATEMENT_TIMEOUT_SECONDS", "40"));
            long publishedByBoth = payPublishedByBothRelays(relayBearer, onSecondNode);
            int[] ports = {viaProxy.port(), onSecondNode.port()};
            // Long enough for several runs of each relay, once a second on each instance.
            long until = System.nanoTime() + Duration.ofSeconds(10).toNanos();
            List<CompletableFuture<List<Long>>> buyers = new ArrayList<>();
            for (int buyer = 0; buyer < 4; buyer++) {
                int first = buyer;
                buyers.add(CompletableFuture.supplyAsync(() -> {
                    List<Long> paidAndRefunded = new ArrayList<>();
                    for (int i = first; System.nanoTime() < until; i++) {
                        paidAndRefunded.add(payThenRefund(relayBearer, ports[i % 2], ports[(i + 1) % 2]));
                    }
                    return paidAndRefunded;
                }, clients));
            }
            List<Long> orderIds = new ArrayList<>();
            for (CompletableFuture<List<Long>> buyer : buyers) {
                orderIds.addAll(buyer.get(120, TimeUnit.SECONDS));
            }
            int orders = orderIds.size();

            List<Map<String, Object>> delivered = new ArrayList<>();
            Await.until(() -> {
                delivered.addAll(orderEvents(broker, events, relayUser));
                return delivered.stream().map(event -> event.get("eventId")).distinct().count();
            }, distinct -> distinct == 2L * orders + 1, Duration.ofSeconds(60), "a payment and a refund event for each order, and the payment event both relays published");
            // Any duplicate still on its way: once every event is marked sent, a relay run in flight may still be
            // publishing one it read before; a run ended on each instance since then has had the broker confirm it.
            Await.until(() -> db.count("SELECT COUNT(*) FROM outbox_event WHERE user_id = ? AND sent_at IS NULL", relayUser) == 0,
                    Duration.ofSeconds(60), "every event of the relays' buyer marked sent");
            double[] runsBefore = {relayRuns(viaProxy), relayRuns(onSecondNode)};
            Await.until(() -> relayRuns(viaProxy) > runsBefore[0] && relayRuns(onSecondNode) > runsBefore[1], Duration.ofSeconds(60),
                    "a relay run ended on each instance after every event was marked sent");
            delivered.addAll(orderEvents(broker, events, relayUser));

            Map<String, Long> eventIds = delivered.stream().collect(Collectors.groupingBy(event -> (String) event.get("eventId"), Collectors.counting()));
            assertEquals(Set.copyOf(db.strings("SELECT event_id FROM outbox_event WHERE user_id = ? AND event_type <> 'deposit.credited'", relayUser)),
                    eventIds.keySet(), "every event written delivered, and nothing else");
            assertTrue(delivered.stream().filter(event -> ((Number) event.get("orderId")).longValue() == publishedByBoth).count() >= 2,
                    "set-up: the event of order " + publishedByBoth + ", published by both relays, delivered twice at least");
            for (long order : orderIds) {
                List<String> types = delivered.stream().filter(event -> ((Number) event.get("orderId")).longValue() == order)
                        .map(event -> (String) event.get("type")).distinct().toList();
                assertEquals(List.of("payment.succeeded", "refund.created"), types, "order " + order + ": the first delivery of each, in order");
            }
            String relayConflict = "Outbox relay stopped early";
            System.out.printf("GaleraIT: %d events through two relays on two nodes, %d deliveries; %d relay runs stopped by a conflict%n",
                    eventIds.size(), delivered.size(), logged(viaProxy, relayConflict, "1213") + logged(onSecondNode, relayConflict, "1213"));
        }
    }

    /**
     * Pays a new order of the bearer's through {@code onSecondNode} while both nodes' relays are held
     * before marking (NodeGate), once every earlier event is sent: the first batch either relay
     * publishes holds that order's event. n2's relay publishes it and waits; n1's, let go, publishes it
     * and marks it sent, and n2, applying that, aborts its held relay: an end no relay's own time bound
     * gives within the wait here (30 s at n2, and n1's relay runs every second). Returns the order.
     */
    private long payPublishedByBothRelays(String bearer, PackagedInstance onSecondNode) throws Exception {
        Await.until(() -> db.count("SELECT COUNT(*) FROM outbox_event WHERE sent_at IS NULL AND parked_at IS NULL") == 0,
                Duration.ofSeconds(30), "every earlier event sent");
        try (NodeGate gate = NodeGate.before(cluster, DATABASE, "UPDATE", "outbox_event", "OLD.sent_at IS NULL AND NEW.sent_at IS NOT NULL")) {
            gate.hold(1);
            gate.hold(2);
            long order = InstanceApi.newOrder(viaProxy.port(), bearer, PRICE);
            String key = newKey();
            Response paid = Api.untilSettled(() -> InstanceApi.pay(onSecondNode.port(), bearer, order, key));
            assertEquals(201, paid.statusCode(), paid.asString());
            String heldOnN2 = gate.awaitWaiting(2, Duration.ofSeconds(20));
            gate.release(1);
            gate.awaitEnded(2, heldOnN2, Duration.ofSeconds(20));
            assertEquals("1", causalRead(2, "SELECT COUNT(*) FROM " + DATABASE + ".outbox_event WHERE idem_key = '" + key
                    + "' AND sent_at IS NOT NULL"), "set-up: n1's relay marked the event of order " + order + " sent while n2's was held");
            return order;
        }
    }

    /** A new order of the bearer's paid on one instance, then refunded in full on another; its id. */
    private long payThenRefund(String bearer, int payOn, int refundOn) {
        long order = InstanceApi.newOrder(payOn, bearer, PRICE);
        String key = newKey();
        Response paid = Api.untilSettled(() -> InstanceApi.pay(payOn, bearer, order, key));
        assertEquals(201, paid.statusCode(), paid.asString());
        String refundKey = newKey();
        Response refunded = Api.untilSettled(() -> InstanceApi.refund(refundOn, Tokens.ops(), order, refundKey, PRICE));
        assertEquals(201, refunded.statusCode(), refunded.asString());
        return order;
    }

    /** The events of {@code userId}'s orders waiting on {@code queue}, taken off it in the order they arrived. */
    private static List<Map<String, Object>> orderEvents(Broker broker, String queue, String userId) throws IOException {
        return broker.takeWaiting(queue).stream().map(GetResponse::getBody).map(GaleraIT::event)
                .filter(event -> userId.equals(event.get("userId")) && event.get("orderId") != null).toList();
    }

    private static Map<String, Object> event(byte[] body) {
        try {
            return JSON.readValue(body, new TypeReference<>() { });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The payments node {@code node} holds once it has applied every commit it has received. */
    private static long paymentsOn(int node) throws SQLException {
        return Long.parseLong(causalRead(node, "SELECT COUNT(*) FROM " + DATABASE + ".pay_record"));
    }

    /** The first column of the one row {@code sql} reads on {@code node}, once the node has applied every write set it has received. */
    private static String causalRead(int node, String sql) throws SQLException {
        try (Connection connection = PrivateGaleraCluster.connect(cluster.port(node)); Statement statement = connection.createStatement()) {
            statement.execute("SET SESSION wsrep_sync_wait = 1");
            try (ResultSet row = statement.executeQuery(sql)) {
                assertTrue(row.next());
                return row.getString(1);
            }
        }
    }

    /**
     * What keeps two first starts on a new database apart: an instance creates no table in it until it
     * holds the migration lease, Flyway's history table included. Flyway creates that table before any
     * migrate callback; on a cluster a second CREATE of it aborts whatever transaction of the first
     * instance holds it (1213), such as its first migration's. Here the lease is held by an instance
     * that is still migrating, as far as the new one can tell, and is then given back.
     */
    @Test
    @Order(9)
    void anInstanceCreatesNoTableInANewDatabaseUntilItHoldsTheMigrationLease() throws Exception {
        String database = "payonce_galera_held_lease";
        Database schema = newDatabase(database);
        schema.update(MigrationLease.CREATE_TABLE);
        schema.update("INSERT INTO payonce_migration_lease VALUES (1, 'an-instance-still-migrating', UTC_TIMESTAMP(6) + INTERVAL 5 MINUTE)");

        FileTime began = FileTime.from(Instant.now().minusSeconds(1));
        CompletableFuture<PackagedInstance> starting = CompletableFuture.supplyAsync(
                () -> start("galera-held-lease", database, cluster.proxyPort(), Map.of()), clients);
        Await.until(() -> logOfInstanceStarted("galera-held-lease", began).contains("Waiting for the migration lease, held by an-instance-still-migrating"),
                Duration.ofSeconds(30), "the new instance waiting for the lease");
        assertEquals(List.of("payonce_migration_lease"), schema.strings("SELECT table_name FROM information_schema.tables WHERE table_schema = ?", database),
                "the schema's tables while another instance holds the lease");

        schema.update("DELETE FROM payonce_migration_lease WHERE holder = 'an-instance-still-migrating'");
        PackagedInstance started = starting.get(60, TimeUnit.SECONDS);
        assertEquals(List.of("0"), schema.strings("SELECT version FROM flyway_schema_history WHERE type = 'BASELINE'"));
        assertEquals(migrationsInTheBuild(), schema.count("SELECT COUNT(*) FROM flyway_schema_history WHERE type <> 'BASELINE' AND success = 1"),
                "every migration applied after the baseline");
        assertEquals(200, RestAssured.given().port(started.managementPort()).get("/q/health/ready").statusCode());
    }

    /**
     * A start that fails where Flyway calls no error callback gives the lease back as it shuts down,
     * instead of holding every other instance back for the lease's term: here Flyway fails reading,
     * while it validates, a history table that is not its own.
     */
    @Test
    @Order(10)
    void aStartThatFailsWhileValidatingGivesTheMigrationLeaseBackAsItShutsDown() throws Exception {
        String database = "payonce_galera_failed_start";
        Database schema = newDatabase(database);
        schema.update("CREATE TABLE flyway_schema_history (id INT PRIMARY KEY)");

        FileTime began = FileTime.from(Instant.now().minusSeconds(1));
        CompletableFuture.runAsync(() -> start("galera-failed-start", database, cluster.proxyPort(), Map.of()), clients);
        Await.until(() -> logOfInstanceStarted("galera-failed-start", began).contains("payonce did not start: the database at"),
                Duration.ofSeconds(30), "the instance failing to start");
        String log = logOfInstanceStarted("galera-failed-start", began);
        assertTrue(log.contains("Took the migration lease"), log);
        Await.until(() -> schema.count("SELECT COUNT(*) FROM payonce_migration_lease") == 0, Duration.ofSeconds(10),
                "the lease given back by the instance shutting down");
        assertTrue(logOfInstanceStarted("galera-failed-start", began).contains("Released the migration lease"));
    }

    /** A database created as an operator does on a cluster, since the instances do not create one. */
    private static Database newDatabase(String name) throws SQLException {
        cluster.execute(1, "CREATE DATABASE " + name);
        return Database.at(cluster.proxyPort(), name);
    }

    /**
     * The console output so far of the instance started as {@code name} since {@code began}, before it
     * is ready: an earlier run's log of the same name is looked past.
     */
    private static String logOfInstanceStarted(String name, FileTime began) throws IOException {
        try (var logs = Files.list(Path.of("target"))) {
            Optional<Path> started = logs.filter(file -> file.getFileName().toString().matches(Pattern.quote(name) + "-\\d+\\.log"))
                    .filter(file -> modifiedSince(file, began))
                    .max(Comparator.comparing(GaleraIT::lastModified));
            return started.isPresent() ? Files.readString(started.get()) : "";
        }
    }

    private static boolean modifiedSince(Path file, FileTime time) {
        return lastModified(file).compareTo(time) >= 0;
    }

    private static FileTime lastModified(Path file) {
        try {
            return Files.getLastModifiedTime(file);
        } catch (IOException goneSinceListed) {
            return FileTime.fromMillis(0);
        }
    }

    /** How many lines of {@code instance}'s log so far contain every one of {@code texts}. */
    private static long logged(PackagedInstance instance, String... texts) throws IOException {
        return Files.readAllLines(instance.log()).stream().filter(line -> Arrays.stream(texts).allMatch(line::contains)).count();
    }

    /** Four clients paying new orders through the proxy until the test stops them, or the test ends. */
    private PaysThroughFaults paysThroughTheProxy() {
        PaysThroughFaults run = PaysThroughFaults.start(clients, 4, viaProxy.port(), user, db);
        runs.add(run);
        return run;
    }

    private static void assertRejoinsIncrementally(int node) throws Exception {
        String rejoinLog = cluster.restart(node);
        // The joiner runs the state transfer script either way (and Galera logs "SST received" either
        // way); only a full transfer has the script prepare a donor's backup.
        assertTrue(rejoinLog.contains("mariabackup IST completed on joiner"), "n" + node + " caught up by IST; it logged:\n" + rejoinLog);
        assertFalse(rejoinLog.contains("Preparing the backup"), "n" + node + " received no full state transfer; it logged:\n" + rejoinLog);
    }

    /** Waits until the proxy sends to {@code node}; a connection the proxy closes on the way is looked past. */
    private static void awaitWriter(int node, Duration within, String awaited) {
        Await.until(GaleraIT::writerIfReachable, writer -> writer != null && writer == node, within, awaited);
    }

    private static Integer writerIfReachable() {
        try {
            return cluster.writer();
        } catch (SQLException refusedOrClosed) {
            return null;
        }
    }

    /**
     * When {@code instance} held the migration lease, as it logged it: from after it took the lease to
     * before it gave it back. The other instance's lease can only begin after that release, and so is
     * logged at the same millisecond or later; "Released", logged after the release, could be logged
     * after the other had taken it, and the two leases would look like they overlapped.
     */
    private static LocalTime[] leaseHeld(PackagedInstance instance) throws IOException {
        List<String> lines = Files.readAllLines(instance.log());
        return new LocalTime[] {loggedAt(lines, "Took the migration lease"), loggedAt(lines, "Releasing the migration lease")};
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
        String metrics = instance.metrics();
        long pipelined = metrics.lines()
                .filter(line -> line.startsWith("payonce_pipelined_transactions_total{")
                        && (line.contains("outcome=\"commit_failed\"") || line.contains("outcome=\"failed\"")))
                .mapToLong(line -> (long) Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1)))
                .sum();
        return pipelined + logged(instance, "retrying with the same command", "errorCode=1213");
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
        return start(name, DATABASE, databasePort, environment);
    }

    private static PackagedInstance start(String name, String database, int databasePort, Map<String, String> environment) {
        Map<String, String> env = new HashMap<>(environment);
        env.put("PAYONCE_DB_PORT", Integer.toString(databasePort));
        env.put("PAYONCE_DB_CREATE_DATABASE", "false");
        try {
            PackagedInstance instance = PackagedInstance.start(name, database, false, env);
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
