package io.payonce.payment.balance;

import io.payonce.support.Api;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Paying spends the owner's balance: it is the owner's act alone, whatever roles the caller holds. */
@QuarkusTest
@ExtendWith(LedgerInvariants.class)
class PayAuthorizationTest {

    private final Database db = Database.forTests();

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
     * holds the owner's lock, so the owner is never told PAYMENT_IN_PROGRESS because of them.
     */
    @Test
    void aStrangerLoopingOnAnOrderNeitherBlocksTheOwnerNorStoresAnything() throws Exception {
        Buyer owner = Buyer.withBalance(50_000);
        String stranger = Tokens.newUserId();
        String strangerBearer = Tokens.userAndOps(stranger);
        AtomicBoolean looping = new AtomicBoolean(true);
        AtomicInteger strangerAnswers = new AtomicInteger();

        for (int round = 0; round < 10; round++) {
            long order = owner.newOrder(100);
            looping.set(true);
            CompletableFuture<Void> loop = CompletableFuture.runAsync(() -> {
                while (looping.get()) {
                    assertEquals(404, Api.pay(strangerBearer, order, Api.newKey()).statusCode());
                    strangerAnswers.incrementAndGet();
                }
            });
            Response paid = Api.pay(owner.bearer(), order, Api.newKey());
            looping.set(false);
            loop.get(30, TimeUnit.SECONDS);

            assertEquals(201, paid.statusCode(), "round " + round + ": " + paid.asString());
        }

        assertTrue(strangerAnswers.get() >= 10, "the stranger really looped: " + strangerAnswers.get());
        assertEquals(0, db.count("SELECT COUNT(*) FROM idempotency_record WHERE scope = ?", stranger));
        assertEquals(50_000 - 10 * 100, db.balance(owner.userId()));
    }
}
