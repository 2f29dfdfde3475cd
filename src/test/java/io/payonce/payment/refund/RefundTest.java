package io.payonce.payment.refund;

import io.payonce.support.Api;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.RowHolder;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.LockWaits;
import io.payonce.support.Replays;
import io.payonce.support.RequestsInFlight;
import io.payonce.support.Tokens;
import io.payonce.support.UserLock;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Its races hold an order's row or a refund's claim until the racers wait on it, and none of them gives up first. */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@ExtendWith(LedgerInvariants.class)
class RefundTest {

    private static final String OPS = Tokens.ops();

    private final Database db = Database.forTests();

    @Test
    void partialRefundsAddUpAndTheFullAmountRefundsTheOrder() {
        Buyer buyer = Buyer.withBalance(5000);
        long order = buyer.paidOrder(1000);

        Response part = Api.refund(OPS, order, Api.newKey(), "r-1", 300);
        Response rest = Api.refund(OPS, order, Api.newKey(), "r-2", 700);

        assertEquals(201, part.statusCode(), part.asString());
        assertEquals("balance", part.jsonPath().getString("method"), "a balance payment is refunded to the balance");
        assertEquals("SUCCEEDED", part.jsonPath().getString("phase"));
        assertEquals(300, part.jsonPath().getLong("refundedTotal"));
        assertEquals("PAID", part.jsonPath().getString("orderStatus"));
        assertEquals(201, rest.statusCode(), rest.asString());
        assertEquals(1000, rest.jsonPath().getLong("refundedTotal"));
        assertEquals("REFUNDED", rest.jsonPath().getString("orderStatus"));
        assertEquals("REFUNDED", db.orderStatus(order));
        assertEquals(5000, db.balance(buyer.userId()), "the payment came back in full");
    }

    /**
     * Another session holds the order's row until all ten refunds, each under its own key and number,
     * wait on it: they are in their transactions at once every time, and once let go, the cap in the
     * order's UPDATE stops them at the payment. Each waits in its one statement until the test lets go.
     */
    @Test
    void concurrentRefundsThatTogetherExceedThePaymentStopAtTheCap() throws Exception {
        Buyer buyer = Buyer.withBalance(1000);
        long order = buyer.paidOrder(1000);
        List<Callable<Response>> refunds = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            String refundNo = "r-" + i;
            refunds.add(() -> Api.refund(OPS, order, Api.newKey(), refundNo, 300));
        }

        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdUntil(db, "orders", order, release);
        List<Response> answers;
        long waiting;
        try (RequestsInFlight<Response> sent = RequestsInFlight.start(refunds)) {
            // Each refund's first statement after its claim locks the order's row.
            waiting = LockWaits.awaitWaiting(db, "orders", order, "SELECT o.id", 10);
            release.complete(null);
            answers = sent.answers();
        } finally {
            release.complete(null); // when the set-up failed too, not after the holder's 30 s
        }
        rowReleased.get(10, TimeUnit.SECONDS);

        assertEquals(10, waiting, "set-up: the ten refunds waited on the order's row at once");
        long refunded = answers.stream().filter(a -> a.statusCode() == 201).count();
        long refused = answers.stream().filter(a -> a.statusCode() == 409
                && "REFUND_EXCEEDS_PAYMENT".equals(a.jsonPath().getString("code"))).count();
        System.out.printf("10 concurrent refunds of 300 on a payment of 1000: refunded=%d refused=%d total=%d%n",
                refunded, refused, db.refundedAmount(order));
        assertEquals(3, refunded);
        assertEquals(7, refused);
        assertEquals(900, db.refundedAmount(order));
        assertEquals(900, db.balance(buyer.userId()));
        assertEquals("PAID", db.orderStatus(order));
    }

    /**
     * A refusal is stored by a transaction of its own after its work rolled back: twins that race
     * through that moment still end with one stored answer, and every definite answer is that one.
     * The moment is made every time: the first twin stops, once it has written its refund, at a trigger
     * of the test's, its claim of the key open, until another twin's claim waits on it. Let go, it is
     * refused and rolls back, and the waiting twin takes the key before the refusal is stored, and runs
     * and is refused in turn. The gate is shut until the test lets go, for less than the waiting claim's
     * lock wait ({@link UserLock#GATE_SECONDS}), which began later.
     */
    @Test
    void twinsOfARefusedRefundAllGetTheOneStoredRefusal() throws Exception {
        Buyer buyer = Buyer.withBalance(1000);
        long order = buyer.paidOrder(1000);
        String key = Api.newKey();

        List<Response> answers;
        long twinsWaiting;
        try (UserLock gate = UserLock.hold(db)) {
            db.update("CREATE TRIGGER test_refund_waits AFTER INSERT ON refund_record FOR EACH ROW IF NEW.order_id = " + order
                    + " THEN " + gate.waitStatement() + "; END IF");
            try (RequestsInFlight<Response> sent = RequestsInFlight.start(8, () -> Api.refund(OPS, order, key, "r-over", 1500))) {
                gate.awaitWaiter(db);
                twinsWaiting = LockWaits.awaitWaiting(db, "idempotency_record", null, "INSERT INTO idempotency_record", 1);
                gate.release();
                answers = sent.answers();
            }
        } finally {
            // Once the gate's session has ended: a statement still at the gate would hold up the DROP.
            db.update("DROP TRIGGER IF EXISTS test_refund_waits");
        }
        Response settled = Api.refund(OPS, order, key, "r-over", 1500);

        assertEquals(409, settled.statusCode(), settled.asString());
        assertEquals("REFUND_EXCEEDS_PAYMENT", settled.jsonPath().getString("code"));
        assertEquals("true", settled.header("Idempotent-Replayed"));
        long refusals = 0;
        for (Response answer : answers) {
            if ("IDEMPOTENCY_KEY_IN_USE".equals(answer.jsonPath().getString("code"))) {
                assertEquals(409, answer.statusCode());
                assertTrue(answer.header("Retry-After") != null, "a twin in flight is told when to retry");
                continue;
            }
            assertEquals(settled.asString(), answer.asString(), "every definite answer is the stored refusal");
            refusals++;
        }
        assertTrue(twinsWaiting >= 1, "set-up: twins' claims waited on the first one's open claim before it was refused");
        assertTrue(refusals >= 2, "the first twin and the one that took the key as the first's work rolled back each ran, "
                + "and each was answered the stored refusal: " + refusals);
        assertEquals(1, db.count("SELECT COUNT(*) FROM idempotency_record WHERE idem_key = ?", key));
        assertEquals(0, db.refundedAmount(order));
        assertEquals(0, db.balance(buyer.userId()));
    }

    @Test
    void aRefundRetriedWithItsKeyReplaysTheFirstAnswer() {
        Buyer buyer = Buyer.withBalance(1000);
        long order = buyer.paidOrder(1000);
        String key = Api.newKey();

        Response first = Api.refund(OPS, order, key, "r-1", 400);
        Response retry = Api.refund(OPS, order, key, "r-1", 400);

        assertEquals(201, first.statusCode());
        assertEquals("true", retry.header("Idempotent-Replayed"));
        assertEquals(first.asString(), retry.asString());
        assertEquals(400, db.balance(buyer.userId()));
    }

    @Test
    void aRefundNumberRefundsOnceWhateverTheKey() {
        Buyer buyer = Buyer.withBalance(1000);
        long order = buyer.paidOrder(1000);
        Response first = Api.refund(OPS, order, Api.newKey(), "r-1", 400);

        Response sameRefund = Api.refund(OPS, order, Api.newKey(), "r-1", 400);
        Response otherAmount = Api.refund(OPS, order, Api.newKey(), "r-1", 500);

        Replays.assertReplayOf(first, sameRefund);
        assertEquals(409, otherAmount.statusCode());
        assertEquals("REFUND_NO_CONFLICT", otherAmount.jsonPath().getString("code"));
        assertEquals(400, db.balance(buyer.userId()));
    }

    @Test
    void reusingARefundKeyForAnotherRefundNamesTheFields() {
        Buyer buyer = Buyer.withBalance(1000);
        long order = buyer.paidOrder(1000);
        String key = Api.newKey();
        assertEquals(201, Api.refund(OPS, order, key, "r-1", 100).statusCode());

        Response reused = Api.refund(OPS, order, key, "r-2", 200);

        assertEquals(422, reused.statusCode());
        assertEquals("IDEMPOTENCY_KEY_REUSED", reused.jsonPath().getString("code"));
        assertTrue(reused.jsonPath().getString("detail").contains("amount, refundNo"), reused.asString());
    }

    @Test
    void anUnpaidOrderCannotBeRefunded() {
        Buyer buyer = Buyer.withBalance(1000);
        long order = buyer.newOrder(500);

        Response response = Api.refund(OPS, order, Api.newKey(), "r-1", 100);

        assertEquals(409, response.statusCode(), response.asString());
        assertEquals("ILLEGAL_TRANSITION", response.jsonPath().getString("code"));
        assertEquals(0, db.count("SELECT COUNT(*) FROM refund_record WHERE order_id = ?", order));
        assertEquals(1000, db.balance(buyer.userId()));
    }

    @Test
    void refundsAreAnOpsActNotTheBuyers() {
        Buyer owner = Buyer.withBalance(1000);
        long order = owner.paidOrder(1000);

        Response buyer = Api.refund(owner.bearer(), order, Api.newKey(), "r-1", 100);
        Response stranger = Api.refund(Tokens.user(Tokens.newUserId()), order, Api.newKey(), "r-1", 100);
        Response ops = Api.refund(OPS, order, Api.newKey(), "r-1", 100);

        assertEquals(403, buyer.statusCode(), buyer.asString());
        assertEquals("FORBIDDEN", buyer.jsonPath().getString("code"));
        assertEquals(403, stranger.statusCode(), stranger.asString());
        assertEquals(201, ops.statusCode(), ops.asString());
        assertEquals(100, db.balance(owner.userId()));
        assertEquals(1, db.count("SELECT COUNT(*) FROM refund_record WHERE order_id = ?", order));
    }

    @Test
    void refundingAFullyRefundedOrderSaysNothingRemainsRefundable() {
        Buyer buyer = Buyer.withBalance(1000);
        long order = buyer.paidOrder(1000);
        assertEquals(201, Api.refund(OPS, order, Api.newKey(), "r-1", 1000).statusCode());

        Response again = Api.refund(OPS, order, Api.newKey(), "r-2", 1);

        assertEquals(409, again.statusCode(), again.asString());
        assertEquals("REFUND_EXCEEDS_PAYMENT", again.jsonPath().getString("code"));
        assertEquals(0, again.jsonPath().getLong("refundable"));
        assertEquals(1, db.count("SELECT COUNT(*) FROM refund_record WHERE order_id = ?", order));
        assertEquals(1000, db.balance(buyer.userId()));
    }

    @Test
    void aRefundBeyondTheCapSaysHowMuchRemains() {
        Buyer buyer = Buyer.withBalance(1000);
        long order = buyer.paidOrder(1000);
        assertEquals(201, Api.refund(OPS, order, Api.newKey(), "r-1", 700).statusCode());

        Response beyond = Api.refund(OPS, order, Api.newKey(), "r-2", 400);

        assertEquals(409, beyond.statusCode(), beyond.asString());
        assertEquals(300, beyond.jsonPath().getLong("refundable"));
    }

}
