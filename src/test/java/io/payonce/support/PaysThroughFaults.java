package io.payonce.support;

import io.restassured.response.Response;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Clients paying new orders of one buyer on one instance, each key sent again while its answer says
 * Retry-After, while a test injects a fault into a store; then the proof, from the database, that the
 * fault cost no payment and paid none twice.
 */
public final class PaysThroughFaults {

    private static final long PRICE = 100;
    /** No order was created before the run stopped. */
    private static final long NO_ORDER = -1;

    record Attempt(long order, String key, long atNanos, Response answer) {
    }

    private final int port;
    private final String userId;
    private final String bearer;
    private final Database db;
    private final long balanceBefore;
    private final AtomicBoolean running = new AtomicBoolean(true);
    private final ConcurrentLinkedQueue<Attempt> attempts = new ConcurrentLinkedQueue<>();
    private final List<CompletableFuture<Void>> clients = new ArrayList<>();
    private final long started = System.nanoTime();
    private long stopped;

    private PaysThroughFaults(int port, String userId, Database db) {
        this.port = port;
        this.userId = userId;
        this.bearer = Tokens.user(userId);
        this.db = db;
        this.balanceBefore = db.balance(userId);
    }

    /** {@code clients} clients paying for {@code userId}, whose account must hold enough, on the instance at {@code port}. */
    public static PaysThroughFaults start(ExecutorService executor, int clients, int port, String userId, Database db) {
        PaysThroughFaults run = new PaysThroughFaults(port, userId, db);
        for (int i = 0; i < clients; i++) {
            run.clients.add(CompletableFuture.runAsync(run::payUntilStopped, executor));
        }
        return run;
    }

    private void payUntilStopped() {
        while (running.get()) {
            long order = orderThroughAnyFault();
            if (order == NO_ORDER) {
                return;
            }
            String key = "k-" + UUID.randomUUID();
            Response answer;
            do {
                answer = pay(order, key);
                attempts.add(new Attempt(order, key, System.nanoTime(), answer));
            } while (answer.header("Retry-After") != null && running.get() && pause());
        }
    }

    /** A new order; its creation is itself a write that the fault may refuse for a while. */
    private long orderThroughAnyFault() {
        while (running.get()) {
            Response created = InstanceApi.createOrder(port, bearer, PRICE);
            if (created.statusCode() == 201) {
                return created.jsonPath().getLong("id");
            }
            assertEquals(503, created.statusCode(), created.asString());
            pause();
        }
        return NO_ORDER;
    }

    private Response pay(long order, String key) {
        return InstanceApi.pay(port, bearer, order, key);
    }

    private static boolean pause() {
        try {
            Thread.sleep(50);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return true;
    }

    /**
     * Returns once {@code count} more pays have succeeded from now on, so that a test sees the run
     * paying before a fault and again after it, instead of sleeping and hoping it did; fails after
     * {@code within}, naming what it {@code awaited}.
     */
    public void awaitPaid(int count, Duration within, String awaited) {
        long from = System.nanoTime();
        Await.until(() -> {
            // A client that ended on an answer it must never get says why, instead of the wait timing out.
            clients.stream().filter(CompletableFuture::isCompletedExceptionally).findFirst().ifPresent(CompletableFuture::join);
            return attempts.stream().filter(a -> a.atNanos() > from && a.answer().statusCode() == 201).count() >= count;
        }, within, awaited + " (" + count + " pays answered 201)");
    }

    /** Stops the clients once each has its current key's answer. */
    public void stop() throws Exception {
        running.set(false);
        for (CompletableFuture<Void> client : clients) {
            client.get(90, TimeUnit.SECONDS);
        }
        stopped = System.nanoTime();
    }

    /**
     * The longest time in which no pay succeeded, from the start of the run to its stop: the refusal
     * window of a fault injected in it, the whole run if no pay succeeded after the fault. Printed
     * with the answers' count by status.
     */
    public Duration refusalWindow(String fault) {
        long longestGap = 0;
        long lastSuccess = started;
        for (Attempt attempt : attempts.stream().sorted(Comparator.comparingLong(Attempt::atNanos)).toList()) {
            if (attempt.answer().statusCode() == 201) {
                longestGap = Math.max(longestGap, attempt.atNanos() - lastSuccess);
                lastSuccess = attempt.atNanos();
            }
        }
        longestGap = Math.max(longestGap, stopped - lastSuccess);
        Map<Integer, Long> byStatus = attempts.stream().collect(Collectors.groupingBy(a -> a.answer().statusCode(), Collectors.counting()));
        Duration window = Duration.ofNanos(longestGap);
        System.out.printf("%s: answers by status %s; no pay succeeded for %d ms at most%n", fault, byStatus, window.toMillis());
        return window;
    }

    /**
     * No answer but 201 or a 503 with Retry-After (never a 500); every key acknowledged is still
     * paid, once, and answers the same when sent again; every key the run left unsettled pays once
     * when sent again now; and the account was debited once per key.
     */
    public void assertEveryKeyPaidOnce() {
        Map<String, Attempt> lastByKey = new HashMap<>();
        for (Attempt attempt : attempts) {
            int status = attempt.answer().statusCode();
            assertTrue(status == 201 || (status == 503 && attempt.answer().header("Retry-After") != null),
                    status + " " + attempt.answer().asString());
            lastByKey.merge(attempt.key(), attempt, (earlier, later) -> later.atNanos() > earlier.atNanos() ? later : earlier);
        }
        assertTrue(lastByKey.size() >= 10, "only " + lastByKey.size() + " pays: too few to prove anything");
        for (Attempt last : lastByKey.values()) {
            Response again = pay(last.order(), last.key());
            for (int tries = 0; again.statusCode() == 503 && tries < 100; tries++) {
                pause();
                again = pay(last.order(), last.key());
            }
            assertEquals(201, again.statusCode(), again.asString());
            if (last.answer().statusCode() == 201) {
                Replays.assertSameAnswer(last.answer(), again);
            }
            assertEquals(1, db.payments(last.order()), "order " + last.order());
        }
        assertEquals(balanceBefore - PRICE * lastByKey.size(), db.balance(userId), "one debit per key");
    }
}
