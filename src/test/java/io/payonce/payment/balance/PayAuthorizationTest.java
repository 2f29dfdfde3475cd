package io.payonce.payment.balance;

import io.payonce.support.Api;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Buyer;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.RowHolder;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Paying spends the owner's balance: it is the owner's act alone, whatever roles the caller holds. On
 * {@link BoundsOutlastHolds}, so that the owner's pay held back under its account row waits in one
 * attempt until the test lets go, instead of being run again every second of the test profile's lock
 * wait and given up after about 4 s, its pay lock given back; nothing here depends on that lock wait.
 */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@ExtendWith(LedgerInvariants.class)
class PayAuthorizationTest {

    /**
     * Sent at once, so that all of them are answered well inside the life of the owner's pay lock
     * (5 s, payonce.lock.ttl): each is a 404 from one read.
     */
    private static final int STRANGER_TRIES = 10;

    private final Database db = Database.forTests();
    private final ExecutorService client = Executors.newSingleThreadExecutor();

    @AfterEach
    void stopTheClient() {
        client.shutdownNow();
    }

    @Test
    void staffWhoAreAlsoUsersCannotPayACustomersOrder() {
        Buyer customer = Buyer.withBalance(5000);
        long order = customer.newOrder(1200);
        String staff = Tokens.newUserId();

        Response response = Api.pay(Tokens.userAndOps(staff), order, Api.newKey());

        assertEquals(404, response.statusCode(), response.asString());
        assertEquals("ORDER_NOT_FOUND", response.jsonPath().getString("code"));
        assertEquals(5000, db.balance(customer.userId()));
        assertEquals("UNPAID", db.orderStatus(order));
        assertEquals(0, db.payments(order));
        assertEquals(0, db.count("SELECT COUNT(*) FROM idempotency_record WHERE scope = ?", staff),
                "nothing is stored under the stranger's key for the victim's order");
    }

    @Test
    void anOpsOnlyCallerCannotPayAtAll() {
        Buyer customer = Buyer.withBalance(5000);
        long order = customer.newOrder(1200);

        Response response = Api.pay(Tokens.ops(), order, Api.newKey());

        assertEquals(403, response.statusCode(), response.asString());
        assertEquals(5000, db.balance(customer.userId()));
    }

    /**
     * Ownership is checked before the pay lock is taken: a stranger hammering the order id never
     * holds the owner's lock, so the owner is never told PAYMENT_IN_PROGRESS because of them. The
     * strangers try while the owner's pay holds that lock, kept in flight by the test holding the
     * owner's account row under its debit: a stranger who reached the lock would be told
     * PAYMENT_IN_PROGRESS, not 404.
     */
    @Test
    void aStrangerLoopingOnAnOrderNeitherBlocksTheOwnerNorStoresAnything() throws Exception {
        Buyer owner = Buyer.withBalance(50_000);
        long order = owner.newOrder(100);
        String stranger = Tokens.newUserId();
        String strangerBearer = Tokens.userAndOps(stranger);
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> held = RowHolder.holdAccountRowUntil(db, owner.userId(), release);
        CompletableFuture<Response> paid;
        List<Response> strangerAnswers;
        boolean ownerStillPaying;
        try {
            paid = CompletableFuture.supplyAsync(() -> Api.pay(owner.bearer(), order, Api.newKey()), client);
            db.awaitDebitWaitingFor(owner.userId());
            strangerAnswers = Concurrently.run(STRANGER_TRIES, () -> Api.pay(strangerBearer, order, Api.newKey()));
            ownerStillPaying = !paid.isDone();
        } finally {
            release.complete(null); // when the set-up failed too, not after the holder's 30 s
        }
        held.get(10, TimeUnit.SECONDS);
        Response ownerAnswer = paid.get(30, TimeUnit.SECONDS);

        assertTrue(ownerStillPaying, "set-up: every stranger was answered while the owner's pay held the order's lock");
        strangerAnswers.forEach(answer -> assertEquals(404, answer.statusCode(), answer.asString()));
        assertEquals(201, ownerAnswer.statusCode(), ownerAnswer.asString());
        assertEquals(0, db.count("SELECT COUNT(*) FROM idempotency_record WHERE scope = ?", stranger));
        assertEquals(50_000 - 100, db.balance(owner.userId()));
    }
}
