package io.payonce.payment.balance;

import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.HangingClient;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.payonce.support.RedisCli;
import io.payonce.support.RowHolder;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URL;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client that gives up on a pay does not end the pay's transaction, which goes on in the
 * database and may commit. The pay lock must stay held until that transaction has ended, so that
 * the gateway's retried twin still gets a fast 409, and the answer must still be logged and counted.
 */
@QuarkusTest
@ExtendWith(LedgerInvariants.class)
class ClientDisconnectTest {

    private static final String EXECUTED = "payonce.requests";

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    @TestHTTPResource("/")
    URL service;

    /** The test profile's lock wait: the account row is held for most of it, so the debit waits but does not time out. */
    @ConfigProperty(name = "payonce.database.lock-wait-timeout-seconds")
    int lockWaitSeconds;

    @Test
    void aClientThatDisconnectsLeavesTheLockHeldUntilItsPaymentHasCommitted() throws Exception {
        Buyer buyer = Buyer.withBalance(5000);
        long order = buyer.newOrder(1500);
        String key = Api.newKey();
        String lock = "payonce:lock:{order:" + order + "}";
        double executedBefore = meters.count(EXECUTED, "operation", "pay", "outcome", "executed");

        CompletableFuture<Void> accountRowHeld = RowHolder.holdAccountRow(buyer.userId(), lockWaitSeconds * 800L);
        HangingClient.payAndHangUp(service, buyer.bearer(), order, key, "", 300);
        // Time for payonce to see the hang-up on purpose: a lock released on cancel would be gone by now.
        Thread.sleep(100);
        long ttlAfterHangUp = Long.parseLong(RedisCli.run("PTTL", lock));
        Response twin = Api.pay(buyer.bearer(), order, key);
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

    private void awaitPayment(long order) {
        Await.until(() -> db.payments(order) > 0, Duration.ofSeconds(5), "the abandoned pay committed");
        assertEquals(1, db.payments(order), "the abandoned pay committed once");
    }

    private static void awaitLockReleased(String lock) {
        Await.until(() -> "-2".equals(RedisCli.run("PTTL", lock)), Duration.ofSeconds(3), "the lock released once the transaction ended");
    }
}
