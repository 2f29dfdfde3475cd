package io.payonce.payment.refund;

import io.payonce.support.Api;
import io.payonce.support.Buyer;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Replays;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@QuarkusTest
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

    @Test
    void concurrentRefundsThatTogetherExceedThePaymentStopAtTheCap() throws Exception {
        Buyer buyer = Buyer.withBalance(1000);
        long order = buyer.paidOrder(1000);
        List<Callable<Response>> refunds = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            String refundNo = "r-" + i;
            refunds.add(() -> Api.refund(OPS, order, Api.newKey(), refundNo, 300));
        }

        List<Response> answers = Concurrently.run(refunds);

        long refunded = answers.stream().filter(a -> a.statusCode() == 201).count();
        long refused = answers.stream().filter(a -> a.statusCode() == 409
                && "REFUND_EXCEEDS_PAYMENT".equals(a.jsonPath().getString("code"))).count();
        System.out.printf("10 concurrent refunds of 300 on a payment of 1000: refunded=%d refused=%d total=%d%n",
                refunded, refused, db.count("SELECT refunded_amount FROM orders WHERE id = ?", order));
        assertEquals(3, refunded);
        assertEquals(7, refused);
        assertEquals(900, db.count("SELECT refunded_amount FROM orders WHERE id = ?", order));
        assertEquals(900, db.balance(buyer.userId()));
        assertEquals("PAID", db.orderStatus(order));
    }

    /**
     * A refusal is stored by a transaction of its own after its work rolled back: twins that race
     * through that moment still end with one stored answer, and every definite answer is that one.
     */
    @Test
    void twinsOfARefusedRefundAllGetTheOneStoredRefusal() throws Exception {
        Buyer buyer = Buyer.withBalance(1000);
        long order = buyer.paidOrder(1000);
        String key = Api.newKey();

        List<Response> answers = Concurrently.run(8, () -> Api.refund(OPS, order, key, "r-over", 1500));
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
        assertTrue(refusals >= 1, "at least one twin ran and was refused");
        assertEquals(1, db.count("SELECT COUNT(*) FROM idempotency_record WHERE idem_key = ?", key));
        assertEquals(0, db.count("SELECT refunded_amount FROM orders WHERE id = ?", order));
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
