package io.payonce.payment.balance;

import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.payonce.support.PrivateRedis;
import io.payonce.support.PrivateRedisProfile;
import io.payonce.support.RequestsInFlight;
import io.payonce.support.RowHolder;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Redis stops answering in the middle of a burst of duplicate payments, for longer than the pay
 * lock lives, then comes back. The Redis paused is the test's own. On the test profile's 1 s lock
 * wait, not {@code BoundsOutlastHolds}': the set-up counts duplicates told that their key is in use,
 * which only a claim that waited out the lock wait gives.
 */
@QuarkusTest
@TestProfile(PrivateRedisProfile.class)
@ExtendWith(LedgerInvariants.class)
class RedisPauseTest {

    /**
     * Longer than the pay lock lives, and long enough for the set-up to be seen inside it: the burst's
     * pays go past the lock within its 250 ms call bound, claim their keys, and a duplicate's claim
     * that waits out the 1 s lock wait on a twin's is answered about 1.5 s into the burst.
     */
    private static final long PAUSE_MILLIS = PrivateRedisProfile.LOCK_TTL_MILLIS + 2000;

    private static final int ORDERS = 5;
    private static final long AMOUNT = 700;

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    /**
     * The buyer's account row is held by another session through the burst: each order's pay that
     * gets furthest waits in its debit with its key claimed, so the duplicates that went on without
     * the lock meet it in the database. Let go once a twin has been told its key is in use there.
     *
     * <p>That must be seen while Redis is still paused: once it answers again, pays take the lock
     * again, and a 409 counted after that could come from a duplicate that took a lock just expired
     * (it lives 2 s here). So the set-up's wait ends when the pause does, counted from before the
     * pause was asked for; the pause outlasts the expected 1.5 s with room for a slow machine. Within
     * it no pay can commit (every one needs the held row for its debit), so each 409 counted is a
     * claim that waited the whole lock wait on a twin's claim still open. A pay given up after its
     * four attempts (about 4 s) is answered 503 and sent again by its client, changing nothing here.
     */
    @Test
    void aBurstOfDuplicatesDuringARedisPauseChargesEachOrderOnceAndLockingResumes() throws Exception {
        Buyer buyer = Buyer.withBalance(100_000);
        List<Long> orders = new ArrayList<>();
        for (int i = 0; i < ORDERS + 1; i++) {
            orders.add(buyer.newOrder(AMOUNT));
        }
        long afterTheOutage = orders.remove(ORDERS);
        double degradedBefore = meters.count("payonce.lock.degraded");
        double keyInUseBefore = keyInUseAnswers();
        List<Callable<Response>> burst = new ArrayList<>();
        for (long order : orders) {
            String key = Api.newKey();
            for (int copy = 0; copy < 6; copy++) {
                burst.add(() -> Api.payUntilSettled(buyer.bearer(), order, key));
            }
            for (int other = 0; other < 3; other++) {
                String otherKey = Api.newKey();
                burst.add(() -> Api.payUntilSettled(buyer.bearer(), order, otherKey));
            }
        }

        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdAccountRowUntil(db, buyer.userId(), release);
        List<Response> answers;
        double keyInUseWhileHeld;
        try {
            long pauseEnds = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(PAUSE_MILLIS);
            PrivateRedis.run("CLIENT", "PAUSE", Long.toString(PAUSE_MILLIS), "ALL");
            try (RequestsInFlight<Response> paying = RequestsInFlight.start(burst)) {
                db.awaitDebitWaitingFor(buyer.userId());
                // Past the 1 s lock wait on a twin's uncommitted claim, a claim is answered 409: both were in their transactions.
                keyInUseWhileHeld = Await.until(() -> keyInUseAnswers() - keyInUseBefore, inUse -> inUse >= 1 || paying.answered() > 0,
                        Duration.ofNanos(pauseEnds - System.nanoTime()), "a duplicate told that its key is in use while Redis was paused");
                release.complete(null);
                answers = paying.answers();
            }
        } finally {
            release.complete(null); // when the set-up failed too, not after the holder's 30 s
        }
        rowReleased.get(10, TimeUnit.SECONDS);

        double degraded = meters.count("payonce.lock.degraded") - degradedBefore;
        System.out.printf("Redis paused %d ms, past the %d ms lock: %d pays of %d orders -> statuses %s, degraded=%.0f, key in use=%.0f%n",
                PAUSE_MILLIS, PrivateRedisProfile.LOCK_TTL_MILLIS, burst.size(), ORDERS,
                answers.stream().map(Response::statusCode).sorted().distinct().toList(), degraded, keyInUseWhileHeld);
        assertTrue(keyInUseWhileHeld >= 1, "set-up: duplicates of one key met in their transactions, the lock not between them");
        answers.forEach(a -> assertEquals(201, a.statusCode(), a.asString()));
        for (long order : orders) {
            assertEquals(1, db.payments(order), "order " + order + " charged once");
        }
        assertEquals(100_000 - ORDERS * AMOUNT, db.balance(buyer.userId()));
        assertTrue(degraded > 0, "some pays went on without the lock");

        awaitPayTakingTheLock(buyer.bearer(), afterTheOutage);
    }

    /**
     * Twins told that their key is in use (409 IDEMPOTENCY_KEY_IN_USE): in-flight answers, less those
     * the pay lock gave, so only those of duplicates that both went past the lock into the database.
     */
    private double keyInUseAnswers() {
        return meters.count("payonce.requests", "operation", "pay", "outcome", "conflict")
                - meters.count("payonce.duplicates", "operation", "pay", "layer", "lock");
    }

    /** After the pause and the circuit breaker's delay, a pay goes through the lock without degrading. */
    private void awaitPayTakingTheLock(String bearer, long order) {
        String key = Api.newKey();
        Await.until(() -> {
            double degradedBefore = meters.count("payonce.lock.degraded");
            Response response = Api.pay(bearer, order, key);
            return meters.count("payonce.lock.degraded") == degradedBefore && response.statusCode() / 100 == 2;
        }, Duration.ofSeconds(10), "a pay through the lock once Redis answered again");
    }
}
