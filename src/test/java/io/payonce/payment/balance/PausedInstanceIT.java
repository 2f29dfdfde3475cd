package io.payonce.payment.balance;

import io.payonce.support.Api;
import io.payonce.support.Database;
import io.payonce.support.InstanceApi;
import io.payonce.support.PackagedInstance;
import io.payonce.support.Replays;
import io.payonce.support.RowHolder;
import io.payonce.support.Tokens;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two instances of the packaged application on one database of their own. Instance B is paused
 * with SIGSTOP inside a pay transaction: it has claimed the key, moved the order to PAID and is
 * waiting for the account row. Instance A must then settle the same key and a new key within the
 * bounds on a stalled holder (the pay lock's 5 s TTL, and the server's 2 s bound on an idle
 * transaction in the test profile), with one debit. B, resumed, finds its connection gone, gives
 * the attempt up after its client-side bound, retries with the same key and replays A's answer.
 */
class PausedInstanceIT {

    private static final String DATABASE = "payonce_paused_instance";
    private static final Duration SETTLE_WITHIN = Duration.ofSeconds(8);
    private final List<PackagedInstance> instances = new ArrayList<>();
    private final ExecutorService clients = Executors.newFixedThreadPool(3);
    private final Database db = Database.named(DATABASE);

    @AfterEach
    void stopInstances() throws InterruptedException {
        clients.shutdownNow();
        for (PackagedInstance instance : instances) {
            instance.close();
        }
    }

    @Test
    void aPausedInstanceIsCutOffAndTheOtherSettlesBothKeysWithinTheBound() throws Exception {
        PackagedInstance a = start(true);
        PackagedInstance b = start(false);
        int portA = a.port();
        int portB = b.port();
        String user = "u-" + UUID.randomUUID();
        String bearer = Tokens.user(user);
        InstanceApi.fund(portA, user, 10_000);
        warmUpPay(portB, bearer);
        long order = InstanceApi.newOrder(portA, bearer, 1200);
        String key = "k-" + UUID.randomUUID();
        long balanceBefore = db.balance(user);

        // Held until B is seen stopped: let go sooner, B's debit could take the row and commit before the pause.
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdAccountRowUntil(db, user, release);
        long start = System.nanoTime();
        CompletableFuture<Response> onB = CompletableFuture.supplyAsync(() -> pay(portB, bearer, order, key), clients);
        db.awaitDebitWaitingFor(user);
        b.pause();
        release.complete(null);
        rowReleased.get(10, TimeUnit.SECONDS);
        CompletableFuture<Response> sameKey = CompletableFuture.supplyAsync(() -> Api.untilSettled(() -> pay(portA, bearer, order, key)), clients);
        CompletableFuture<Response> newKey = CompletableFuture.supplyAsync(() -> Api.untilSettled(() -> pay(portA, bearer, order, "k-" + UUID.randomUUID())), clients);
        Response sameKeyAnswer = sameKey.get(60, TimeUnit.SECONDS);
        Response newKeyAnswer = newKey.get(60, TimeUnit.SECONDS);
        Duration settled = Duration.ofNanos(System.nanoTime() - start);
        b.signal("CONT");
        Response resumed = onB.get(60, TimeUnit.SECONDS);

        System.out.printf("instance B paused inside a pay: A settled both keys %d ms after B's pay began (%d, %d); "
                        + "B answered %d after resuming; debits=%d%n",
                settled.toMillis(), sameKeyAnswer.statusCode(), newKeyAnswer.statusCode(), resumed.statusCode(), db.payments(order));
        assertTrue(settled.compareTo(SETTLE_WITHIN) < 0, "settled within the bounds: " + settled.toMillis() + " ms");
        assertEquals(201, sameKeyAnswer.statusCode(), sameKeyAnswer.asString());
        assertEquals(201, newKeyAnswer.statusCode(), newKeyAnswer.asString());
        assertTrue(Replays.isRepeat(sameKeyAnswer) != Replays.isRepeat(newKeyAnswer), "one key paid, the other repeats it");
        assertEquals(sameKeyAnswer.asString(), resumed.asString(), "B, resumed, gets the key's one answer");
        assertEquals("true", resumed.header("Idempotent-Replayed"));
        assertEquals(1, db.payments(order));
        assertEquals(balanceBefore - 1200, db.balance(user));
    }

    /** A cold instance could still be compiling its pay path when paused; a few pays make it fast. */
    private void warmUpPay(int port, String bearer) {
        for (int i = 0; i < 10; i++) {
            assertEquals(201, pay(port, bearer, InstanceApi.newOrder(port, bearer, 10), "warm-" + UUID.randomUUID()).statusCode());
        }
    }

    private static Response pay(int port, String bearer, long order, String key) {
        return RestAssured.given().port(port).auth().oauth2(bearer).header("Idempotency-Key", key).post("/orders/" + order + "/pay");
    }

    private PackagedInstance start(boolean cleanDatabase) throws IOException, InterruptedException {
        PackagedInstance instance = PackagedInstance.start("paused-instance", DATABASE, cleanDatabase, Map.of());
        instances.add(instance);
        return instance;
    }
}
