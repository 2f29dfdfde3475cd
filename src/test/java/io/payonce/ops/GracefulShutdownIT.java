package io.payonce.ops;

import com.rabbitmq.client.GetResponse;
import io.payonce.idempotency.Answer;
import io.payonce.support.Await;
import io.payonce.support.Broker;
import io.payonce.support.Database;
import io.payonce.support.FreePorts;
import io.payonce.support.InstanceApi;
import io.payonce.support.MoneyInvariants;
import io.payonce.support.PackagedInstance;
import io.payonce.support.TcpGate;
import io.payonce.support.Tokens;
import io.restassured.RestAssured;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packaged application stopped by SIGTERM, as Kubernetes stops a pod, once 20 pays have begun on it
 * (their claims written) against a database slowed by a proxy, some of them still in flight, and while
 * new pays keep arriving, each on a connection of its own, every 150 ms for 1.5 s from the signal
 * (through the delay and into the drain), and once more after the HTTP listener has closed. Readiness
 * answers DOWN while the HTTP listener is still open, and every pay is answered 201, or refused cleanly
 * (503 with Retry-After, or a connection refused before the request was sent); none is reset
 * mid-request or answered 500. The database then holds exactly the payments of the 201s, each with
 * its order PAID and its one ledger line, and nothing of the others. A pay command the consumer holds
 * when the signal comes is finished too: paid, replied and acked before the broker connection closes.
 * The instance runs with the shipped shutdown timeout and a one-second delay.
 */
class GracefulShutdownIT {

    private static final String DATABASE = "payonce_graceful_shutdown";
    /**
     * A command queue of its own: the packaged application the other *IT classes share stays up and
     * consumes the build's queue, so a command sent there could be answered by it, from its database.
     */
    private static final String COMMANDS = Broker.COMMANDS + ".shutdown";
    private static final int PAYS = 20;
    private static final int COMMANDS_IN_FLIGHT = 2;
    private static final Duration LATE_PAY_EVERY = Duration.ofMillis(150);
    /**
     * The delay and half a second of the drain. Not until the listener closes: Quarkus waits for the
     * requests it has accepted, and a pay accepted every 150 ms, each taking seconds here, would hold
     * its drain open up to the shutdown timeout.
     */
    private static final Duration LATE_PAYS_FOR = Duration.ofMillis(1500);
    /** One every {@link #LATE_PAY_EVERY} for {@link #LATE_PAYS_FOR}, and one after the listener closed. */
    private static final int LATE_PAYS = (int) (LATE_PAYS_FOR.toMillis() / LATE_PAY_EVERY.toMillis()) + 2;
    private static final long BALANCE = 10_000;
    private static final long AMOUNT = 700;
    /** Each way, per chunk: 20 pays' round trips then take two to three seconds, longer than the delay. */
    private static final Duration HTTP_PAYS_LATENCY = Duration.ofMillis(60);
    /** A pay alone takes about three seconds then, two more than the delay, and less than a transaction attempt's bound. */
    private static final Duration COMMAND_LATENCY = Duration.ofMillis(80);

    private final Database db = Database.named(DATABASE);
    private final TcpGate proxy = TcpGate.to(Integer.parseInt(System.getenv().getOrDefault("PAYONCE_DB_PORT", "3306")));
    private final ExecutorService clients = Executors.newCachedThreadPool();
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(clients).build();
    private Process instance;
    private Broker broker;

    @AfterEach
    void stop() throws Exception {
        if (instance != null) {
            instance.destroyForcibly();
            instance.waitFor(30, TimeUnit.SECONDS);
        }
        clients.shutdownNow();
        proxy.close();
        // The instance's own command queue and exchanges go with it: a command left there would reach the next test's instance.
        try (Broker cleanup = broker != null ? broker : Broker.connect()) {
            cleanup.deleteCommandObjects(COMMANDS);
        }
    }

    @Test
    void sigtermAnswersEveryPayInFlightAndWritesOnlyTheAnsweredOnes() throws Exception {
        int port = FreePorts.next();
        int managementPort = FreePorts.next();
        start(port, managementPort);
        List<Payer> payers = new ArrayList<>();
        for (int i = 0; i < PAYS + LATE_PAYS; i++) {
            payers.add(Payer.funded(port));
        }
        warmUp(port);

        proxy.slow(HTTP_PAYS_LATENCY);
        List<CompletableFuture<Outcome>> pays = new ArrayList<>(payers.subList(0, PAYS).stream().map(payer -> pay(http, port, payer)).toList());
        // Every pay has begun on the instance, whatever the load of the machine: its claim is written. At this latency the
        // last to claim is still a few round trips from its answer, and the signal comes in between.
        awaitClaims(payers.subList(0, PAYS).stream().map(Payer::key).toList());
        long sigterm = sigterm();
        // Counted once kill has returned, the signal delivered: a pay unanswered now was unanswered when it came.
        long unansweredAtSigterm = pays.stream().filter(pay -> !pay.isDone()).count();
        Watch watch = watch(port, managementPort, sigterm);
        List<Long> sentAfterSigterm = sendLatePays(port, payers.subList(PAYS, PAYS + LATE_PAYS), sigterm, watch, pays);

        List<Outcome> outcomes = new ArrayList<>();
        for (CompletableFuture<Outcome> pay : pays) {
            outcomes.add(pay.get(60, TimeUnit.SECONDS));
        }
        assertTrue(instance.waitFor(45, TimeUnit.SECONDS), "the instance exits once drained");
        watch.done().get(10, TimeUnit.SECONDS);

        System.out.printf("SIGTERM with %d of %d pays in flight: readiness DOWN after %d ms, HTTP listener closed after %d ms, exit %d; "
                + "answers %s; late pays sent after %s ms, answered %s%n", unansweredAtSigterm, PAYS, watch.readinessDownMillis(),
                watch.listenerClosedMillis(), instance.exitValue(), outcomes.subList(0, PAYS), sentAfterSigterm, outcomes.subList(PAYS, outcomes.size()));
        assertTrue(unansweredAtSigterm > 0, "set-up: pays that had begun were still unanswered at SIGTERM: " + unansweredAtSigterm);
        assertTrue(watch.readinessDownMillis() >= 0, "readiness answered DOWN");
        assertTrue(watch.readinessDownMillis() < watch.listenerClosedMillis(), "readiness went DOWN before the HTTP listener closed");
        assertTrue(sentAfterSigterm.get(0) < 1000, "a late pay was sent during the delay");
        assertTrue(sentAfterSigterm.get(sentAfterSigterm.size() - 1) > watch.listenerClosedMillis(), "a late pay was sent after the listener closed");
        assertTrue(outcomes.get(outcomes.size() - 1).failure() instanceof ConnectException,
                "the pay sent after the listener closed was refused: " + outcomes.get(outcomes.size() - 1));
        for (int i = 0; i < outcomes.size(); i++) {
            Outcome outcome = outcomes.get(i);
            Payer payer = payers.get(i);
            assertTrue(outcome.paid() || outcome.cleanlyRefused(), "pay " + i + " answered or cleanly refused: " + outcome);
            assertEquals(outcome.paid() ? 1 : 0, db.payments(payer.order()), "payments of order " + payer.order() + " after " + outcome);
            assertEquals(outcome.paid() ? "PAID" : "UNPAID", db.orderStatus(payer.order()), "order " + payer.order() + " after " + outcome);
            assertEquals(outcome.paid() ? BALANCE - AMOUNT : BALANCE, db.balance(payer.userId()), "balance after " + outcome);
        }
        assertMoneyInvariants();
    }

    /**
     * Two pay commands in flight, each on a consumer of the instance, and no HTTP request: nothing
     * holds the stop but the consumers' own drain, which keeps the pool and the broker open until both
     * commands are paid, replied and acked.
     */
    @Test
    void sigtermFinishesTheCommandsInHandAndAcksThem() throws Exception {
        int port = FreePorts.next();
        start(port, FreePorts.next());
        List<Payer> byCommand = List.of(Payer.funded(port), Payer.funded(port));
        broker = Broker.connect();
        broker.awaitConsumers(COMMANDS, COMMANDS_IN_FLIGHT, Duration.ofSeconds(30));
        String replies = broker.replyQueue();

        proxy.slow(COMMAND_LATENCY);
        List<String> keys = new ArrayList<>();
        for (Payer payer : byCommand) {
            String key = "cmd-" + UUID.randomUUID();
            keys.add(key);
            broker.sendPayTo(COMMANDS, key, replies, key, payer.userId(), payer.order());
        }
        awaitClaims(keys);
        sigterm();
        assertTrue(instance.waitFor(45, TimeUnit.SECONDS), "the instance exits once drained");

        List<GetResponse> answers = broker.awaitAll(replies, keys.size(), message -> keys.contains(message.getProps().getCorrelationId()),
                Duration.ofSeconds(5));
        for (int i = 0; i < keys.size(); i++) {
            String key = keys.get(i);
            GetResponse reply = answers.stream().filter(message -> key.equals(message.getProps().getCorrelationId())).findFirst().orElseThrow();
            assertEquals(201, reply.getProps().getHeaders().get("x-payonce-status"), Broker.text(reply));
            assertEquals(false, reply.getProps().getHeaders().get(Answer.REPLAYED_HEADER), "answered by the instance that stopped");
            Payer payer = byCommand.get(i);
            assertEquals(1, db.payments(payer.order()));
            assertEquals("PAID", db.orderStatus(payer.order()));
            assertEquals(BALANCE - AMOUNT, db.balance(payer.userId()));
        }
        assertEquals(0, broker.messageCount(COMMANDS), "both commands were acked, none left to be redelivered");
        assertMoneyInvariants();
    }

    /**
     * Pays sent on connections of their own, one every {@link #LATE_PAY_EVERY} from {@code sigterm}
     * for {@link #LATE_PAYS_FOR}, then one once the listener has closed: the milliseconds after the
     * signal each was sent.
     */
    private List<Long> sendLatePays(int port, List<Payer> latePayers, long sigterm, Watch watch, List<CompletableFuture<Outcome>> pays)
            throws InterruptedException {
        List<Long> sent = new ArrayList<>();
        // In the order of latePayers, with none skipped: the outcomes follow the payers one for one.
        while (sent.size() < latePayers.size() - 1 && millisSince(sigterm) <= LATE_PAYS_FOR.toMillis()) {
            sent.add(millisSince(sigterm));
            pays.add(pay(ownConnection(), port, latePayers.get(sent.size() - 1)));
            Thread.sleep(LATE_PAY_EVERY.toMillis());
        }
        Await.until(() -> watch.listenerClosedMillis() >= 0, Duration.ofSeconds(45).minusMillis(millisSince(sigterm)), "the HTTP listener closed");
        sent.add(millisSince(sigterm));
        pays.add(pay(ownConnection(), port, latePayers.get(sent.size() - 1)));
        return sent;
    }

    private HttpClient ownConnection() {
        return HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).executor(clients).build();
    }

    private static long millisSince(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
    }

    /**
     * Returns once the claim of every key is written, read uncommitted, in its still open transaction or
     * committed: each pay or command has begun on the instance, whatever the load of the machine. One
     * look for all of them, so that the last claim is seen within a look of being written.
     */
    private void awaitClaims(List<String> keys) throws SQLException {
        String marks = String.join(", ", Collections.nCopies(keys.size(), "?"));
        try (Connection connection = db.connect();
             var uncommitted = connection.createStatement();
             var claims = connection.prepareStatement("SELECT COUNT(*) FROM idempotency_record WHERE idem_key IN (" + marks + ")")) {
            uncommitted.execute("SET SESSION TRANSACTION ISOLATION LEVEL READ UNCOMMITTED");
            for (int i = 0; i < keys.size(); i++) {
                claims.setString(i + 1, keys.get(i));
            }
            Await.until(() -> {
                try (var rows = claims.executeQuery()) {
                    return rows.next() && rows.getLong(1) >= keys.size();
                }
            }, Duration.ofSeconds(10), "the claims of " + keys.size() + " keys");
        }
    }

    private long sigterm() throws IOException, InterruptedException {
        long sent = System.nanoTime();
        assertEquals(0, new ProcessBuilder("kill", "-TERM", Long.toString(instance.pid())).start().waitFor());
        return sent;
    }

    private void assertMoneyInvariants() throws SQLException {
        proxy.slow(Duration.ZERO);
        try (Connection connection = db.connect()) {
            MoneyInvariants.violations(connection).forEach((invariant, rows) -> assertEquals(0L, rows, invariant));
        }
    }

    private void start(int port, int managementPort) throws IOException, InterruptedException {
        String reactiveUrl = "mysql://127.0.0.1:" + proxy.port() + "/" + DATABASE;
        ProcessBuilder builder = new ProcessBuilder(PackagedInstance.command(List.of("-Dquarkus.profile=test",
                "-Dquarkus.http.port=" + port, "-D%test.quarkus.management.port=" + managementPort,
                "-D%test.quarkus.flyway.clean-at-start=true", "-D%test.quarkus.shutdown.delay=1s",
                "-Dquarkus.datasource.reactive.url=" + reactiveUrl), "-Xmx256m"))
                .redirectErrorStream(true)
                .redirectOutput(Path.of("target", "graceful-shutdown-" + port + ".log").toFile());
        builder.environment().put("PAYONCE_TEST_DB_NAME", DATABASE);
        builder.environment().put("PAYONCE_COMMANDS_QUEUE", COMMANDS);
        builder.environment().put("PAYONCE_COMMANDS_IN_FLIGHT", Integer.toString(COMMANDS_IN_FLIGHT));
        instance = builder.start();
        Await.until(() -> readiness(managementPort) == 200, Duration.ofSeconds(30), "the instance ready");
    }

    /** A cold instance could still be compiling its pay path; a few pays at full speed make it fast. */
    private void warmUp(int port) throws Exception {
        for (int i = 0; i < 5; i++) {
            Outcome warm = pay(http, port, Payer.funded(port)).get(30, TimeUnit.SECONDS);
            assertTrue(warm.paid(), warm.toString());
        }
    }

    private static CompletableFuture<Outcome> pay(HttpClient http, int port, Payer payer) {
        HttpRequest request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/orders/" + payer.order() + "/pay"))
                .header("Authorization", "Bearer " + payer.bearer())
                .header("Idempotency-Key", payer.key())
                .POST(HttpRequest.BodyPublishers.noBody())
                .timeout(Duration.ofSeconds(60))
                .build();
        return http.sendAsync(request, HttpResponse.BodyHandlers.ofString())
                .thenApply(response -> new Outcome(response.statusCode(), response.headers().firstValue("Retry-After").orElse(null), null))
                .exceptionally(failure -> new Outcome(0, null, failure.getCause() == null ? failure : failure.getCause()));
    }

    /** The HTTP status, with Retry-After, or the failure of a request that got no answer. */
    private record Outcome(int status, String retryAfter, Throwable failure) {

        boolean paid() {
            return status == 201;
        }

        /** A 503 that says when to retry, or a connection refused: the pay never began. */
        boolean cleanlyRefused() {
            return (status == 503 && retryAfter != null) || failure instanceof ConnectException;
        }

        @Override
        public String toString() {
            return failure == null ? Integer.toString(status) : failure.toString();
        }
    }

    /** When, after SIGTERM, readiness first answered DOWN and the HTTP listener first refused a connection (-1: never). */
    private record Watch(AtomicLong readinessDown, AtomicLong listenerClosed, CompletableFuture<Void> done) {

        long readinessDownMillis() {
            return readinessDown.get();
        }

        long listenerClosedMillis() {
            return listenerClosed.get();
        }
    }

    private Watch watch(int port, int managementPort, long sigterm) {
        AtomicLong readinessDown = new AtomicLong(-1);
        AtomicLong listenerClosed = new AtomicLong(-1);
        CompletableFuture<Void> done = CompletableFuture.runAsync(() -> {
            long deadline = sigterm + TimeUnit.SECONDS.toNanos(45);
            while (listenerClosed.get() < 0 && System.nanoTime() < deadline) {
                long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - sigterm);
                if (readinessDown.get() < 0 && readiness(managementPort) == 503) {
                    readinessDown.set(millis);
                }
                if (!listening(port)) {
                    listenerClosed.set(millis);
                }
                try {
                    Thread.sleep(20);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }, clients);
        return new Watch(readinessDown, listenerClosed, done);
    }

    private static int readiness(int managementPort) {
        try {
            return RestAssured.given().port(managementPort).get("/q/health/ready").statusCode();
        } catch (Exception notListening) {
            return 0;
        }
    }

    private static boolean listening(int port) {
        try (Socket ignored = new Socket(InetAddress.getLoopbackAddress(), port)) {
            return true;
        } catch (IOException refused) {
            return false;
        }
    }

    /** A user with a funded account, a bearer token and an unpaid order, made through the instance's API, and the key to pay it with. */
    private record Payer(String userId, String bearer, long order, String key) {

        static Payer funded(int port) {
            String userId = Tokens.newUserId();
            InstanceApi.fund(port, userId, BALANCE);
            String bearer = Tokens.user(userId);
            return new Payer(userId, bearer, InstanceApi.newOrder(port, bearer, AMOUNT), "k-" + UUID.randomUUID());
        }
    }
}
