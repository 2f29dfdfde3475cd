package io.payonce.payment.refund;

import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Api;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Buyer;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.LockWaits;
import io.payonce.support.PausedRecoveryJob;
import io.payonce.support.RowHolder;
import io.payonce.support.Tokens;
import io.payonce.support.Webhooks;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The exit of a refund to the card the processor failed after it had succeeded, against the
 * processor simulator: payonce recorded the money as gone back to the card, the processor's later
 * refund.failed was kept as CONTRADICTING, and the amount stayed counted as refunded, so that the
 * order could never be refunded in full. An operator's reversal, once the processor's lookup by the
 * refund's id says it failed, makes the refund FAILED and its amount refundable again, once, with an
 * audit row and an event; every refusal writes nothing.
 */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@WithTestResource(value = ProcessorSimulatorResource.class, scope = TestResourceScope.GLOBAL)
@ExtendWith(LedgerInvariants.class)
@PausedRecoveryJob
class RefundReversalTest {

    private static final String OPS = Tokens.ops();
    private static final Map<String, String> REASON = Map.of("reason", "the processor failed re_x after it succeeded; ticket OPS-31");

    private final Database db = Database.forTests();

    @AfterEach
    void heal() {
        processor().heal();
        processor().up();
    }

    /** A shipped order refunded in full by two refunds to the card; the last one failed at the processor since, its event CONTRADICTING. */
    record Contradicted(long order, long kept, long failed, String failedKey) {
    }

    private Contradicted shippedThenRefundedInFullThenFailed() {
        long order = Buyer.withBalance(0).paidByCard(2000, "tok_visa");
        assertEquals(200, Api.transition(OPS, order, "ship").statusCode(), "set-up: shipped");
        Response kept = Api.refund(OPS, order, Api.newKey(), "r-1", 1300);
        Response failing = Api.refund(OPS, order, Api.newKey(), "r-2", 700);
        assertEquals(201, failing.statusCode(), "set-up: " + failing.asString());
        assertEquals("REFUNDED", db.orderStatus(order), "set-up");
        long failed = failing.jsonPath().getLong("refundId");
        String failedKey = db.processorKeyOfRefund(failed);
        Response event = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "refund.failed", processor().failRefundAfterSuccess(failedKey).json()));
        assertEquals("CONTRADICTING", event.jsonPath().getString("outcome"), "set-up: " + event.asString());
        return new Contradicted(order, kept.jsonPath().getLong("refundId"), failed, failedKey);
    }

    /**
     * Red before the reversal existed: the 700 stayed counted as refunded and the order REFUNDED, so
     * no refund could give the buyer their money. Reversed, the order is SHIPPED again with 700
     * refundable, a refund of 701 exceeds what remains, one of 700 makes it REFUNDED again. A repeat
     * under the key replays the reversal; another key is refused; the refund's own key keeps its 201.
     */
    @Test
    void aRefundTheProcessorFailedAfterItSucceededIsReversedOnce() {
        Contradicted refunded = shippedThenRefundedInFullThenFailed();
        String key = Api.newKey();

        Response reversed = reverse(OPS, refunded.failed(), key, REASON);

        assertEquals(201, reversed.statusCode(), reversed.asString());
        assertEquals("FAILED", reversed.jsonPath().getString("phase"));
        assertEquals("expired_or_canceled_card", reversed.jsonPath().getString("failureCode"));
        assertEquals("SHIPPED", reversed.jsonPath().getString("orderStatus"), "the order is what it was refunded from");
        assertEquals(700, reversed.jsonPath().getLong("refundable"));
        assertTrue(reversed.jsonPath().getString("processorSaid").contains(" failed, expired_or_canceled_card, 700 eur"), reversed.asString());
        assertEquals("FAILED", db.refundPhase(refunded.failed()));
        assertEquals(1300, db.refundedAmount(refunded.order()));
        assertEquals("SHIPPED", db.orderStatus(refunded.order()));
        assertEquals("REFUNDED|SHIPPED", db.string("SELECT CONCAT(order_before, '|', order_after) FROM refund_reversal WHERE refund_id = ?",
                refunded.failed()));
        assertEquals(1, db.count("SELECT COUNT(*) FROM outbox_event WHERE event_type = 'refund.reversed' AND ref_id = ?",
                Long.toString(refunded.failed())));

        Response replayed = reverse(OPS, refunded.failed(), key, REASON);
        assertEquals(201, replayed.statusCode(), replayed.asString());
        assertEquals("true", replayed.header("Idempotent-Replayed"));
        assertEquals(reversed.jsonPath().getMap(""), replayed.jsonPath().getMap(""));
        Response reused = reverse(OPS, refunded.failed(), key, Map.of("reason", "another reason"));
        assertEquals(422, reused.statusCode(), reused.asString());
        assertEquals("IDEMPOTENCY_KEY_REUSED", reused.jsonPath().getString("code"));
        assertRefused(reverse(OPS, refunded.failed(), Api.newKey(), REASON), "REFUND_NOT_REVERSIBLE");
        Response shown = Api.as(OPS).get("/refunds/" + refunded.failed());
        assertEquals(REASON.get("reason"), shown.jsonPath().getString("reversal.reason"), shown.asString());
        assertEquals("REFUNDED", shown.jsonPath().getString("reversal.orderBefore"));
        assertEquals("SHIPPED", shown.jsonPath().getString("reversal.orderAfter"));
        assertEquals("SUCCEEDED", Api.as(OPS).get("/refunds/" + refunded.failed()).jsonPath().getList("history.phase").get(2),
                "the history keeps the success the reversal undid");
        assertEquals("FAILED", Api.as(OPS).get("/refunds/" + refunded.failed()).jsonPath().getString("phase"));

        Response beyond = Api.refund(OPS, refunded.order(), Api.newKey(), "r-3", 701);
        assertEquals(409, beyond.statusCode(), beyond.asString());
        assertEquals("REFUND_EXCEEDS_PAYMENT", beyond.jsonPath().getString("code"));
        assertEquals(201, Api.refund(OPS, refunded.order(), Api.newKey(), "r-3", 700).statusCode());
        assertEquals("REFUNDED", db.orderStatus(refunded.order()));
        assertEquals(2000, db.refundedAmount(refunded.order()));
    }

    /**
     * A completed order refunded in full goes back to COMPLETED; one refunded in full by the release
     * before, which kept no status to go back to, goes back to COMPLETED too, never to a status from
     * which it could be shipped again. The kept status is spent by the reversal.
     */
    @Test
    void anOrderGoesBackToWhatItWasRefundedFromOrToCompleted() {
        for (boolean keptByThisRelease : List.of(true, false)) {
            long order = Buyer.withBalance(0).paidByCard(500, "tok_visa");
            assertEquals(200, Api.transition(OPS, order, "ship").statusCode(), "set-up: shipped");
            String completed = keptByThisRelease ? "complete" : "ship";
            assertEquals(200, Api.transition(OPS, order, completed).statusCode(), "set-up: " + completed);
            long refund = Api.refund(OPS, order, Api.newKey(), "r-1", 500).jsonPath().getLong("refundId");
            assertEquals("REFUNDED", db.orderStatus(order), "set-up");
            if (!keptByThisRelease) {
                db.update("UPDATE orders SET refunded_from = NULL WHERE id = ?", order);
            }
            processor().failRefundAfterSuccess(db.processorKeyOfRefund(refund));

            Response reversed = reverse(OPS, refund, Api.newKey(), REASON);

            assertEquals(201, reversed.statusCode(), reversed.asString());
            assertEquals("COMPLETED", reversed.jsonPath().getString("orderStatus"), "kept by this release: " + keptByThisRelease);
            assertEquals("COMPLETED", db.orderStatus(order));
            assertEquals(0, db.count("SELECT COUNT(*) FROM orders WHERE id = ? AND refunded_from IS NOT NULL", order), "spent");
        }
    }

    /** Until the processor says the refund failed, nothing is reversed and the key stays free for when it does. */
    @Test
    void theProcessorMustSayThatVeryRefundFailed() {
        long order = Buyer.withBalance(0).paidByCard(1000, "tok_visa");
        long refund = Api.refund(OPS, order, Api.newKey(), "r-1", 400).jsonPath().getLong("refundId");
        String key = Api.newKey();

        Response refused = reverse(OPS, refund, key, REASON);

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertTrue(refused.jsonPath().getString("detail").contains(" succeeded, 400 eur"), refused.asString());
        assertNothingReversed(order, refund, 400, "PAID");

        processor().down();
        Response unavailable = reverse(OPS, refund, key, REASON);
        assertEquals(503, unavailable.statusCode(), unavailable.asString());
        assertEquals("PROCESSOR_UNAVAILABLE", unavailable.jsonPath().getString("code"));
        assertNothingReversed(order, refund, 400, "PAID");
        processor().up();

        processor().failRefundAfterSuccess(db.processorKeyOfRefund(refund));
        Response reversed = reverse(OPS, refund, key, REASON);
        assertEquals(201, reversed.statusCode(), "the same key, once the processor says so: " + reversed.asString());
        assertEquals("PAID", reversed.jsonPath().getString("orderStatus"));
        assertEquals(0, db.refundedAmount(order));
    }

    /**
     * Only a refund to the card that succeeded is reversed (a refund to the balance never went to the
     * processor; a FAILED one is refused as a reversed one is, above); only ops reverse; a body
     * without a printable reason is refused.
     */
    @Test
    void onlyOpsReverseOnlyASucceededRefundToTheCard() {
        Buyer buyer = Buyer.withBalance(5000);
        long balancePaid = buyer.paidOrder(1000);
        long toBalance = Api.refund(OPS, balancePaid, Api.newKey(), "r-1", 300).jsonPath().getLong("refundId");
        assertRefused(reverse(OPS, toBalance, Api.newKey(), REASON), "REFUND_NOT_REVERSIBLE");
        long order = Buyer.withBalance(0).paidByCard(1000, "tok_visa");
        long succeeded = Api.refund(OPS, order, Api.newKey(), "r-1", 300).jsonPath().getLong("refundId");
        processor().failRefundAfterSuccess(db.processorKeyOfRefund(succeeded));

        Response missing = reverse(OPS, Long.MAX_VALUE, Api.newKey(), REASON);
        assertEquals(404, missing.statusCode(), missing.asString());
        assertEquals("REFUND_NOT_FOUND", missing.jsonPath().getString("code"));
        assertEquals(403, reverse(buyer.bearer(), succeeded, Api.newKey(), REASON).statusCode());
        for (Object body : List.of(Map.of(), Map.of("reason", ""), Map.of("reason", "caf\u00e9"))) {
            Response invalid = reverse(OPS, succeeded, Api.newKey(), body);
            assertEquals(400, invalid.statusCode(), invalid.asString());
            assertEquals("VALIDATION_FAILED", invalid.jsonPath().getString("code"), invalid.asString());
        }
        assertNothingReversed(order, succeeded, 300, "PAID");
    }

    /**
     * Two operators reverse the same refund at once, each under a key of their own, both past the
     * processor's lookup and held on the order's row lock: the refund's compare-and-set lets one
     * through, and the other is refused without a second event or a second 700 given back.
     */
    @Test
    void concurrentReversalsReverseOnce() throws Exception {
        Contradicted refunded = shippedThenRefundedInFullThenFailed();
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> held = RowHolder.holdUntil(db, "orders", refunded.order(), release);
        CompletableFuture<List<Response>> both = CompletableFuture.supplyAsync(() -> {
            try {
                return Concurrently.run(2, () -> reverse(Tokens.ops("ops-" + Api.newKey()), refunded.failed(), Api.newKey(), REASON));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        LockWaits.awaitWaiting(db, "orders", refunded.order(), "SELECT", 2);
        release.complete(null);
        held.get();

        List<Integer> statuses = both.get().stream().map(Response::statusCode).sorted().toList();
        assertEquals(List.of(201, 409), statuses, both.get().stream().map(Response::asString).toList().toString());
        assertEquals(1300, db.refundedAmount(refunded.order()));
        assertEquals(1, db.count("SELECT COUNT(*) FROM outbox_event WHERE event_type = 'refund.reversed' AND ref_id = ?",
                Long.toString(refunded.failed())));
    }

    /**
     * Red before a reversal reconciled the contradiction: a later refund of the same charge whose
     * answer was lost is settled not_refunded without acknowledging the reversed one, which the
     * charge's refunded total no longer counts, as payonce no longer does.
     */
    @Test
    void aReversalReconcilesTheContradictionForLaterSettlements() {
        long order = Buyer.withBalance(0).paidByCard(2100, "tok_visa");
        long first = Api.refund(OPS, order, Api.newKey(), "r-0", 800).jsonPath().getLong("refundId");
        Response event = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "refund.failed",
                processor().failRefundAfterSuccess(db.processorKeyOfRefund(first)).json()));
        assertEquals("CONTRADICTING", event.jsonPath().getString("outcome"), "set-up: " + event.asString());
        assertEquals(201, reverse(OPS, first, Api.newKey(), REASON).statusCode());

        Response settled = notRefundedOfALaterLostRefund(order, 1300);

        assertEquals(201, settled.statusCode(), settled.asString());
        assertTrue(settled.jsonPath().getString("processorSaid").endsWith(" succeeded, 0 of 2100 eur refunded, as payonce recorded"),
                settled.asString());
        assertEquals(0, db.refundedAmount(order));
    }

    /**
     * A refund the processor made under an id payonce cannot keep (here over 255 characters) was
     * recorded SUCCEEDED without one: nothing but its reference would tie it to a refund an operator
     * names, so it is not reversed, and the refusal says why.
     */
    @Test
    void aRefundRecordedWithoutAKeptIdIsNotReversed() {
        long order = Buyer.withBalance(0).paidByCard(1000, "tok_visa");
        String chargeId = db.string("SELECT processor_charge_id FROM pay_record WHERE order_id = ? AND phase = 'SUCCEEDED'", order);
        processor().plantRefundUnderNextKey("re_" + "l".repeat(300), chargeId, 400, "EUR", true);
        long refund = Api.refund(OPS, order, Api.newKey(), "r-1", 400).jsonPath().getLong("refundId");
        processor().failRefundAfterSuccess(db.processorKeyOfRefund(refund));

        Response refused = reverse(OPS, refund, Api.newKey(), REASON);

        assertRefused(refused, "REFUND_NOT_REVERSIBLE");
        assertTrue(refused.jsonPath().getString("detail").contains("SUCCEEDED under an id payonce could not keep"), refused.asString());
        assertNothingReversed(order, refund, 400, "PAID");
    }

    /**
     * A reversal reconciles only the failure it confirmed: an event about another refund under the
     * same key, here one whose id payonce cannot keep, still refuses a later not_refunded of the charge.
     */
    @Test
    void aReversalLeavesOtherContradictionsStanding() {
        long order = Buyer.withBalance(0).paidByCard(2100, "tok_visa");
        long first = Api.refund(OPS, order, Api.newKey(), "r-0", 800).jsonPath().getLong("refundId");
        String firstKey = db.processorKeyOfRefund(first);
        Response other = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "refund.failed",
                processor().refundUnder(firstKey).json().put("id", "re/not-kept").put("status", "failed").put("failure_code", "lost")));
        assertEquals("CONTRADICTING", other.jsonPath().getString("outcome"), "set-up: " + other.asString());
        processor().failRefundAfterSuccess(firstKey);
        assertEquals(201, reverse(OPS, first, Api.newKey(), REASON).statusCode());

        Response refused = notRefundedOfALaterLostRefund(order, 1300);

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertTrue(refused.jsonPath().getString("detail").contains("contradicted 1 of the refunds"), refused.asString());
    }

    /**
     * A later refund of {@code amount} whose send never reached the processor, overdue, settled by an
     * operator as not refunded: the operator's answer.
     */
    private Response notRefundedOfALaterLostRefund(long order, long amount) {
        processor().failNextRefundOf(order, Fault.ERROR_BEFORE_CHARGE);
        long lost = Api.refund(OPS, order, Api.newKey(), "r-1", amount).jsonPath().getLong("refundId");
        db.update("UPDATE refund_record SET first_sent_at = first_sent_at - INTERVAL 2 HOUR WHERE id = ?", lost);
        return Api.as(OPS).header("Idempotency-Key", Api.newKey()).contentType(ContentType.JSON)
                .body(Map.of("outcome", "not_refunded", "reason", "the processor's dashboard shows no refund"))
                .post("/refunds/" + lost + "/settlement");
    }

    private void assertNothingReversed(long order, long refund, long refunded, String status) {
        assertEquals("SUCCEEDED", db.refundPhase(refund));
        assertEquals(refunded, db.refundedAmount(order));
        assertEquals(status, db.orderStatus(order));
        assertEquals(0, db.count("SELECT COUNT(*) FROM refund_reversal WHERE refund_id = ?", refund));
        assertEquals(0, db.count("SELECT COUNT(*) FROM outbox_event WHERE event_type = 'refund.reversed' AND ref_id = ?", Long.toString(refund)));
    }

    private static Response reverse(String bearer, long refund, String key, Object body) {
        return Api.as(bearer).header("Idempotency-Key", key).contentType(ContentType.JSON).body(body).post("/refunds/" + refund + "/reversal");
    }

    private static void assertRefused(Response answer, String code) {
        assertEquals(409, answer.statusCode(), answer.asString());
        assertEquals(code, answer.jsonPath().getString("code"), answer.asString());
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
