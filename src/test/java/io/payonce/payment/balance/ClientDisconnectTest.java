package io.payonce.payment.balance;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.HangingClient;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.payonce.support.RedisCli;
import io.payonce.support.RowHolder;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URL;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client that gives up on a pay does not end the pay's transaction, which goes on in the
 * database and may commit. The pay lock must stay held until that transaction has ended, so that
 * the gateway's retried twin still gets a fast 409, and the answer must still be logged and counted.
 * On {@link BoundsOutlastHolds}: the pay held back under its account row waits in one attempt until
 * the test lets go, instead of being run again every second of the test profile's lock wait and given
 * up after about 4 s, answering 503 and giving back its lock while the test still looks at it. Nothing
 * here depends on that lock wait. The lock itself lives 5 s (payonce.lock.ttl): the hang-up, the look
 * at the lock and the twin come within a second or so of the pay taking it.
 */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@ExtendWith(LedgerInvariants.class)
class ClientDisconnectTest {

    private static final String EXECUTED = "payonce.requests";
    /**
     * Requests whose connection closed before their answer was written: Vert.x reports them reset to
     * its metrics, and Quarkus Micrometer times them with status RESET.
     */
    private static final String HTTP_REQUESTS = "http.server.requests";

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    @Inject
    MeterRegistry registry;

    @TestHTTPResource("/")
    URL service;

    @Test
    void aClientThatDisconnectsLeavesTheLockHeldUntilItsPaymentHasCommitted() throws Exception {
        Buyer buyer = Buyer.withBalance(5000);
        long order = buyer.newOrder(1500);
        String key = Api.newKey();
        String lock = "payonce:lock:{order:" + order + "}";
        double executedBefore = meters.count(EXECUTED, "operation", "pay", "outcome", "executed");
        double resetBefore = requestsReset();

        // The account row is held until the twin is answered, so the pay is still in its transaction at
        // the hang-up and at the twin.
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> accountRowHeld = RowHolder.holdAccountRowUntil(db, buyer.userId(), release);
        ExecutorService caller = Executors.newSingleThreadExecutor();
        long ttlAfterHangUp;
        Response twin;
        try {
            caller.submit(() -> {
                HangingClient.payAndHangUp(service, buyer.bearer(), order, key, "", TimeUnit.SECONDS.toMillis(30));
                return null;
            });
            db.awaitDebitWaitingFor(buyer.userId());
            // Hangs up once its pay waits on the row, not after a guess: its wait interrupted, it closes the socket and ends.
            caller.shutdownNow();
            assertTrue(caller.awaitTermination(10, TimeUnit.SECONDS), "set-up: the client hung up");
            // payonce has seen the hang-up: Vert.x reports the request reset as it handles the closed connection, in the
            // event-loop task that then closes the request's response, on which RESTEasy Reactive cancels it. A lock
            // released on cancel would have had its DEL sent microseconds later, before redis-cli, a process started
            // after this, asks for the lock's TTL.
            Await.until(() -> requestsReset() > resetBefore, Duration.ofSeconds(5), "the hang-up seen by payonce, its request reset");
            ttlAfterHangUp = Long.parseLong(RedisCli.run("PTTL", lock));
            twin = Api.pay(buyer.bearer(), order, key);
        } finally {
            release.complete(null); // when the set-up failed too, not after the holder's 30 s
            caller.shutdownNow();
        }
        accountRowHeld.get(10, TimeUnit.SECONDS);
        awaitPayment(order);
        awaitLockReleased(lock);

        System.out.printf("client hung up while the pay waited for the account row: lock TTL %d ms, twin %d %s, debits=%d%n",
                ttlAfterHangUp, twin.statusCode(), twin.jsonPath().getString("code"), db.payments(order));
        assertTrue(ttlAfterHangUp > 0, "the lock outlived the client: PTTL " + ttlAfterHangUp);
        assertEquals(409, twin.statusCode(), twin.asString());
        assertEquals("PAYMENT_IN_PROGRESS", twin.jsonPath().getString("code"));
        assertEquals(3500, db.balance(buyer.userId()));
        assertEquals(1, meters.count(EXECUTED, "operation", "pay", "outcome", "executed") - executedBefore,
                "the abandoned pay's answer was still counted and logged");
        Response retry = Api.pay(buyer.bearer(), order, key);
        assertEquals(201, retry.statusCode(), retry.asString());
        assertEquals("true", retry.header("Idempotent-Replayed"));
    }

    /** Requests the HTTP server saw reset by their client, whatever their path: tests run one at a time. */
    private double requestsReset() {
        return registry.find(HTTP_REQUESTS).tag("status", "RESET").timers().stream().mapToLong(Timer::count).sum();
    }

    private void awaitPayment(long order) {
        Await.until(() -> db.payments(order) > 0, Duration.ofSeconds(5), "the abandoned pay committed");
        assertEquals(1, db.payments(order), "the abandoned pay committed once");
    }

    private static void awaitLockReleased(String lock) {
        Await.until(() -> "-2".equals(RedisCli.run("PTTL", lock)), Duration.ofSeconds(3), "the lock released once the transaction ended");
    }
}
