package io.payonce.payment.balance;

import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Buyer;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.payonce.support.PrivateRedis;
import io.payonce.support.PrivateRedisProfile;
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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Redis stops answering in the middle of a burst of duplicate payments, for longer than the pay
 * lock lives, then comes back. The Redis paused is the test's own.
 */
@QuarkusTest
@TestProfile(PrivateRedisProfile.class)
@ExtendWith(LedgerInvariants.class)
class RedisPauseTest {

    private static final long PAUSE_MILLIS = PrivateRedisProfile.LOCK_TTL_MILLIS + 1000;

    private static final int ORDERS = 5;
    private static final long AMOUNT = 700;

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    @Test
    void aBurstOfDuplicatesDuringARedisPauseChargesEachOrderOnceAndLockingResumes() throws Exception {
        Buyer buyer = Buyer.withBalance(100_000);
        List<Long> orders = new ArrayList<>();
        for (int i = 0; i < ORDERS + 1; i++) {
            orders.add(buyer.newOrder(AMOUNT));
        }
        long afterTheOutage = orders.remove(ORDERS);
        double degradedBefore = meters.count("payonce.lock.degraded");
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

        PrivateRedis.run("CLIENT", "PAUSE", Long.toString(PAUSE_MILLIS), "ALL");
        List<Response> answers = Concurrently.run(burst);

        double degraded = meters.count("payonce.lock.degraded") - degradedBefore;
        System.out.printf("Redis paused %d ms, past the %d ms lock: %d pays of %d orders -> statuses %s, degraded=%.0f%n", PAUSE_MILLIS,
                PrivateRedisProfile.LOCK_TTL_MILLIS, burst.size(), ORDERS,
                answers.stream().map(Response::statusCode).sorted().distinct().toList(), degraded);
        answers.forEach(a -> assertEquals(201, a.statusCode(), a.asString()));
        for (long order : orders) {
            assertEquals(1, db.payments(order), "order " + order + " charged once");
        }
        assertEquals(100_000 - ORDERS * AMOUNT, db.balance(buyer.userId()));
        assertTrue(degraded > 0, "some pays went on without the lock");

        awaitPayTakingTheLock(buyer.bearer(), afterTheOutage);
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
