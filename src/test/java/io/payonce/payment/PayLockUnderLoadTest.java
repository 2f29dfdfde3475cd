package io.payonce.payment;

import io.payonce.support.Api;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.payonce.support.Payer;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * With Redis healthy, ordinary load never costs a payment its lock: the Redis pool and its wait
 * queue are sized for the concurrency, and a busy local queue is not mistaken for Redis being down.
 */
@QuarkusTest
@ExtendWith(LedgerInvariants.class)
class PayLockUnderLoadTest {

    private static final int CLIENTS = 64;
    private static final String DEGRADED = "payonce.lock.degraded";

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    @Test
    void sixtyFourConcurrentPaysAndTheirReplaysAllTakeTheLock() throws Exception {
        List<Payer> buyers = new ArrayList<>();
        for (int i = 0; i < CLIENTS; i++) {
            buyers.add(Payer.withOrder(1000, 300));
        }
        double degradedBefore = meters.count(DEGRADED);

        List<Response> pays = Concurrently.run(pays(buyers));
        List<Response> replays = Concurrently.run(pays(buyers));

        double degraded = meters.count(DEGRADED) - degradedBefore;
        System.out.printf("%d concurrent pays, then their %d replays: pays without the lock=%.0f%n", CLIENTS, CLIENTS, degraded);
        pays.forEach(pay -> assertEquals(201, pay.statusCode(), pay.asString()));
        replays.forEach(replay -> assertEquals("true", replay.header("Idempotent-Replayed"), replay.asString()));
        assertEquals(0, degraded, "no pay went without the lock while Redis was healthy");
        for (Payer buyer : buyers) {
            assertEquals(700, db.balance(buyer.userId()));
        }
    }

    private static List<Callable<Response>> pays(List<Payer> buyers) {
        return buyers.stream().<Callable<Response>>map(buyer -> () -> Api.pay(buyer.bearer(), buyer.order(), buyer.key())).toList();
    }
}
