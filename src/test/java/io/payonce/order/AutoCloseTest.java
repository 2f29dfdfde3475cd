package io.payonce.order;

import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Buyer;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.RowHolder;
import io.payonce.support.Tokens;
import io.payonce.support.UserLock;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The races below hold a pay or the auto-close on a lock of the test's until the test has seen the
 * other one wait too (at most 6 s and 10 s of looking). The test profile's bounds (a lock wait of 1 s,
 * then a retry; 2 s a statement) would let go first on a slow machine: the pay would retry behind the
 * close, or the close fail, and the race the test set up would not be the one it judges. The card
 * pay whose charge the processor holds needs them too: the profile's 1 s processor timeout would give
 * the held charge up (202) and leave the decline to the recovery job, at a moment the test does not
 * choose.
 *
 * <p>The test profile turns the job's schedule off, not the job: each test runs it when its story needs
 * it, with the default delay (30 min), and makes an order older than that by moving its times back.
 */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@WithTestResource(value = ProcessorSimulatorResource.class, scope = TestResourceScope.GLOBAL)
@ExtendWith(LedgerInvariants.class)
class AutoCloseTest {

    private final Database db = Database.forTests();
    private final ExecutorService client = Executors.newSingleThreadExecutor();

    @Inject
    AutoCloseJob autoClose;

    @AfterEach
    void stopTheClient() {
        try {
            processor().heal();
        } finally {
            client.shutdownNow();
        }
    }

    @Test
    void closesOnlyStaleUnpaidOrders() {
        String bearer = Tokens.user(Tokens.newUserId());
        long stale = Api.newOrder(bearer, 100);
        long fresh = Api.newOrder(bearer, 100);
        long stalePaid = Api.newOrder(bearer, 100);
        makeStale(stale);
        makeStale(stalePaid);
        db.update("UPDATE orders SET status = 'PAID' WHERE id = ? AND status = 'UNPAID'", stalePaid);

        autoClose.closeStaleOrders().await().indefinitely();

        assertEquals("CLOSED", db.orderStatus(stale));
        assertEquals("UNPAID", db.orderStatus(fresh));
        assertEquals("PAID", db.orderStatus(stalePaid));
    }

    @Test
    void closesMoreStaleOrdersThanOneBatchHolds() {
        String bearer = Tokens.user(Tokens.newUserId());
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            long id = Api.newOrder(bearer, 100);
            makeStale(id);
            ids.add(id);
        }

        int closed = autoClose.closeStaleOrders().await().indefinitely();

        assertTrue(closed >= 5, "closed " + closed);
        ids.forEach(id -> assertEquals("CLOSED", db.orderStatus(id)));
    }

    /**
     * A charge the processor holds past the delay, then declines: the order, created two hours before
     * the decline, is UNPAID again from the decline on, and the client's pay with a new key, which its
     * 402 invites, is charged. Red before auto-close counted from the last move to UNPAID: it counted
     * from creation, so the job's next run closed the order the decline had just given back, and the
     * pay with the new key was refused 409 ILLEGAL_TRANSITION (CLOSED).
     */
    @Test
    void anOrderADeclineGaveBackAfterTheDelayCanBePaidWithANewKey() throws Exception {
        Checkout buyer = Buyer.withBalance(0).checkout(300);
        processor().failNextChargeOf(buyer.order(), Fault.HELD);
        CompletableFuture<Response> card = CompletableFuture.supplyAsync(() -> buyer.payByCard("tok_decline_generic"), client);
        Await.until(() -> processor().heldChargesOf(buyer.order()) == 1, Duration.ofSeconds(10),
                "the charge of order " + buyer.order() + " held at the processor");
        makeStale(buyer.order()); // the charge outlasts the delay

        autoClose.closeStaleOrders().await().indefinitely();
        assertEquals("PAYING", db.orderStatus(buyer.order()), "an order whose card payment waits for its processor is never closed");
        processor().release(buyer.order());
        Response declined = card.get(30, TimeUnit.SECONDS);
        autoClose.closeStaleOrders().await().indefinitely();
        Response paid = Api.payByCard(buyer.bearer(), buyer.order(), Api.newKey(), "tok_visa");

        assertEquals(402, declined.statusCode(), declined.asString());
        assertEquals("CARD_DECLINED", declined.jsonPath().getString("code"));
        assertEquals(201, paid.statusCode(), paid.asString());
        assertEquals("SUCCEEDED", paid.jsonPath().getString("phase"));
        assertEquals("PAID", db.orderStatus(buyer.order()));
    }

    /**
     * The delay restarts at a decline and runs out again: an order given back longer ago than the
     * delay is closed like any other, or a decline would keep its order open for good.
     */
    @Test
    void anOrderADeclineGaveBackLongerAgoThanTheDelayIsClosed() {
        Checkout buyer = Buyer.withBalance(0).checkout(300);
        Response declined = buyer.payByCard("tok_decline_generic");
        assertEquals(402, declined.statusCode(), declined.asString());
        db.update("UPDATE orders SET created_at = NOW(6) - INTERVAL 3 HOUR, unpaid_again_at = NOW(6) - INTERVAL 2 HOUR WHERE id = ?",
                buyer.order());

        autoClose.closeStaleOrders().await().indefinitely();

        assertEquals("CLOSED", db.orderStatus(buyer.order()));
    }

    /**
     * The pay first: its transaction has moved the order to PAID and waits to debit the account row
     * the test holds, when the auto-close comes for the order's row and waits for it. Let go, the pay
     * commits, and the close, which reads the row again once it has the lock, leaves it PAID.
     */
    @Test
    void anAutoCloseThatMeetsAPayInFlightLeavesTheOrderPaid() throws Exception {
        Buyer buyer = Buyer.withBalance(5000);
        long order = staleOrder(buyer);
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> held = RowHolder.holdAccountRowUntil(db, buyer.userId(), release);
        CompletableFuture<Response> pay;
        CompletableFuture<Integer> close;
        boolean bothInFlight;
        try {
            pay = CompletableFuture.supplyAsync(() -> Api.pay(buyer.bearer(), order, Api.newKey()), client);
            long payConnection = db.awaitDebitWaitingFor(buyer.userId());
            close = autoClose.closeStaleOrders().subscribeAsCompletionStage();
            awaitWaitForAnOrderRowOf(payConnection, "UPDATE orders SET status = 'CLOSED'%",
                    "the auto-close waiting for the order row the pay holds");
            bothInFlight = !pay.isDone() && !close.isDone();
        } finally {
            release.complete(null); // when the set-up failed too, not after the holder's 30 s
        }
        held.get(10, TimeUnit.SECONDS);

        Response answer = pay.get(30, TimeUnit.SECONDS);
        int closed = close.get(30, TimeUnit.SECONDS);
        assertTrue(bothInFlight, "set-up: the pay and the auto-close were both under way when the account row was let go");
        assertEquals(201, answer.statusCode(), answer.asString());
        assertEquals(0, closed, "the job closed exactly the orders that were not paid: none");
        assertEquals("PAID", db.orderStatus(order), "a payment that was acknowledged is never closed");
        assertEquals(1, db.payments(order));
        assertEquals(4900, db.balance(buyer.userId()));
    }

    /**
     * The auto-close first: it holds the order's row, stopped by the test's trigger just before it
     * writes CLOSED, when the pay's compare-and-set comes for the row and waits for it. Let go, the
     * close commits, and the pay finds the order CLOSED: refused, nothing recorded, nothing taken.
     */
    @Test
    void aPayThatMeetsAnAutoCloseInFlightIsRefusedAndTakesNothing() throws Exception {
        Buyer buyer = Buyer.withBalance(5000);
        long order = staleOrder(buyer);
        try (UserLock gate = UserLock.hold(db)) {
            db.update("CREATE TRIGGER test_close_waits BEFORE UPDATE ON orders FOR EACH ROW IF NEW.id = " + order
                    + " AND NEW.status = 'CLOSED' THEN " + gate.waitStatement() + "; END IF");
            CompletableFuture<Integer> close = autoClose.closeStaleOrders().subscribeAsCompletionStage();
            long closeConnection = gate.awaitWaiter(db);
            CompletableFuture<Response> pay = CompletableFuture.supplyAsync(() -> Api.pay(buyer.bearer(), order, Api.newKey()), client);
            awaitWaitForAnOrderRowOf(closeConnection, "UPDATE orders SET status = % WHERE id = %",
                    "the pay's compare-and-set waiting for the order row the auto-close holds");
            boolean bothInFlight = !pay.isDone() && !close.isDone();
            gate.release();

            Response answer = pay.get(30, TimeUnit.SECONDS);
            int closed = close.get(30, TimeUnit.SECONDS);
            assertTrue(bothInFlight, "set-up: the auto-close and the pay were both under way when the trigger was let go");
            assertEquals(409, answer.statusCode(), answer.asString());
            assertEquals("ILLEGAL_TRANSITION", answer.jsonPath().getString("code"), "a payment that lost, lost to the auto-close");
            assertEquals("CLOSED", answer.jsonPath().getString("currentStatus"));
            assertEquals(1, closed, "the job closed exactly the orders that were not paid");
            assertEquals("CLOSED", db.orderStatus(order));
            assertEquals(0, db.payments(order));
            assertEquals(5000, db.balance(buyer.userId()));
        } finally {
            // After the lock's session has ended: a close still in the trigger would hold up the DROP.
            db.update("DROP TRIGGER IF EXISTS test_close_waits");
        }
    }

    /**
     * Returns once a statement starting as {@code statement} (a LIKE pattern) waits in InnoDB for a
     * row of orders that the session {@code holder} has locked. By the holder, not by the row's key:
     * the auto-close waits on its index entry (status, created_at, id), the pay on the primary key.
     */
    private void awaitWaitForAnOrderRowOf(long holder, String statement, String awaited) {
        Await.until(() -> db.count("""
                SELECT COUNT(*)
                FROM information_schema.INNODB_LOCK_WAITS wait
                JOIN information_schema.INNODB_LOCKS requested ON requested.lock_id = wait.requested_lock_id
                JOIN information_schema.INNODB_TRX waiting ON waiting.trx_id = wait.requesting_trx_id
                JOIN information_schema.INNODB_TRX holding ON holding.trx_id = wait.blocking_trx_id
                WHERE requested.lock_table = CONCAT('`', DATABASE(), '`.`orders`')
                  AND holding.trx_mysql_thread_id = ?
                  AND waiting.trx_query LIKE ?""", holder, statement) > 0, Duration.ofSeconds(10), awaited);
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }

    private long staleOrder(Buyer buyer) {
        long id = Api.newOrder(buyer.bearer(), 100);
        makeStale(id);
        return id;
    }

    private void makeStale(long id) {
        db.update("UPDATE orders SET created_at = NOW(6) - INTERVAL 2 HOUR WHERE id = ?", id);
    }
}
