package io.payonce.payment.refund;

import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Api;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.PausedRecoveryJob;
import io.payonce.support.Tokens;
import io.payonce.support.Webhooks;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What only a refund's settlement by ops has, against the processor simulator: the proof that
 * nothing was refunded, which is the refund's charge, whose refunded total must be what payonce
 * recorded of it, since the refund's key proves nothing once the processor has forgotten it; the
 * processor's refunds of the charge an operator acknowledges; the charge and the stated key a named
 * refund must share; and the order a whole refund leaves REFUNDED. The refund's answer is lost (202,
 * UNKNOWN), and its first send is moved back beyond resend-within, as an hour of the recovery job
 * finding nothing under its key would leave it. The rest of an operator's settlement is the
 * lifecycle's, proven for every kind ({@code OperatorSettlementsTest}). The refund recovery job is
 * paused so that nothing but the test moves the refund.
 */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@WithTestResource(value = ProcessorSimulatorResource.class, scope = TestResourceScope.GLOBAL)
@ExtendWith(LedgerInvariants.class)
@PausedRecoveryJob
class NotRefundedTest {

    private static final String OPS = Tokens.ops();

    private final Database db = Database.forTests();

    /** Whether this application's processor client has made its first refund, which loads and connects it. */
    private static boolean warm;

    /** A refund to the card first: a cold client's first call can outlast a short processor timeout. */
    @BeforeEach
    void warmTheClient() {
        if (!warm) {
            long order = Buyer.withBalance(0).paidByCard(100, "tok_visa");
            Api.refund(OPS, order, Api.newKey(), "warm-up", 100);
            warm = true;
        }
    }

    @AfterEach
    void healAndResume() {
        processor().heal();
        processor().up();
    }

    /**
     * A refund to the card payonce lost the answer of: of {@code amount}, the whole of its order's
     * card payment; {@code processorKey} is its key at the processor, {@code chargeId} the charge it
     * gives back from.
     */
    record Overdue(long order, long refund, long amount, String processorKey, String chargeId) {

        String reference() {
            return "order-" + order + "-refund-r-1";
        }
    }

    /** The charge's refunded total is what payonce recorded of it: a refund that succeeded before counts on both sides. */
    @Test
    void notRefundedIsSettledWhenTheChargesRefundedTotalIsTheRefundsPayonceRecorded() {
        long order = Buyer.withBalance(0).paidByCard(2100, "tok_visa");
        assertEquals(201, Api.refund(OPS, order, Api.newKey(), "r-0", 800).statusCode());
        processor().failNextRefundOf(order, Fault.ERROR_BEFORE_CHARGE);
        Response lost = Api.refund(OPS, order, Api.newKey(), "r-1", 1300);
        assertEquals(202, lost.statusCode(), lost.asString());
        long refund = lost.jsonPath().getLong("refundId");
        db.update("UPDATE refund_record SET first_sent_at = first_sent_at - INTERVAL 2 HOUR WHERE id = ?", refund);

        Response settled = settle(OPS, refund, Api.newKey(), notRefunded());

        assertEquals(201, settled.statusCode(), settled.asString());
        assertTrue(settled.jsonPath().getString("processorSaid").endsWith(" succeeded, 800 of 2100 eur refunded, as payonce recorded"),
                settled.asString());
        assertEquals(800, db.refundedAmount(order), "the lost refund's 1300 is given back");
    }

    /**
     * The processor failed a refund payonce recorded as succeeded (its event kept as CONTRADICTING),
     * which lowered the charge's refunded total by as much as the lost refund, made, raised it: the
     * totals agree, yet prove nothing, and the settlement is refused until ops reconcile.
     */
    @Test
    void notRefundedIsRefusedWhileTheProcessorContradictsARecordedRefundOfTheCharge() {
        long order = Buyer.withBalance(0).paidByCard(2100, "tok_visa");
        Response earlier = Api.refund(OPS, order, Api.newKey(), "r-0", 800);
        assertEquals(201, earlier.statusCode(), earlier.asString());
        String earlierKey = db.processorKeyOfRefund(earlier.jsonPath().getLong("refundId"));
        Response reversed = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "refund.failed",
                processor().refundUnder(earlierKey).json().put("status", "failed").put("failure_code", "reversed")));
        assertEquals("CONTRADICTING", reversed.jsonPath().getString("outcome"), reversed.asString());
        processor().failNextRefundOf(order, Fault.ERROR_BEFORE_CHARGE);
        Response lost = Api.refund(OPS, order, Api.newKey(), "r-1", 1300);
        long refund = lost.jsonPath().getLong("refundId");
        db.update("UPDATE refund_record SET first_sent_at = first_sent_at - INTERVAL 2 HOUR WHERE id = ?", refund);

        Response refused = settle(OPS, refund, Api.newKey(), notRefunded());

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertTrue(refused.jsonPath().getString("detail").contains("contradicted 1 of the refunds"), refused.asString());
        assertEquals(2100, db.refundedAmount(order), "the lost refund's 1300 stays reserved");
    }

    /**
     * Ops reconcile the contradiction with the processor and acknowledge the refund it contradicted,
     * by its id: that refund counts as the processor describes it now, and the lost refund is settled
     * as not refunded, its 1300 refundable again. The audit row keeps what was acknowledged.
     */
    @Test
    void notRefundedIsSettledOnceTheContradictedRefundIsAcknowledged() {
        long order = Buyer.withBalance(0).paidByCard(2100, "tok_visa");
        Response earlier = Api.refund(OPS, order, Api.newKey(), "r-0", 800);
        String earlierKey = db.processorKeyOfRefund(earlier.jsonPath().getLong("refundId"));
        String earlierId = processor().refundUnder(earlierKey).id();
        Response reversed = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "refund.failed",
                processor().refundUnder(earlierKey).json().put("status", "failed").put("failure_code", "reversed")));
        assertEquals("CONTRADICTING", reversed.jsonPath().getString("outcome"), "set-up: " + reversed.asString());
        processor().failNextRefundOf(order, Fault.ERROR_BEFORE_CHARGE);
        long refund = Api.refund(OPS, order, Api.newKey(), "r-1", 1300).jsonPath().getLong("refundId");
        db.update("UPDATE refund_record SET first_sent_at = first_sent_at - INTERVAL 2 HOUR WHERE id = ?", refund);

        Response settled = settle(OPS, refund, Api.newKey(), notRefundedAcknowledging(earlierId));

        assertEquals(201, settled.statusCode(), settled.asString());
        assertTrue(settled.jsonPath().getString("processorSaid").contains("800 of 2100 eur refunded, as payonce recorded and acknowledged ("
                + earlierId + " succeeded"), settled.asString());
        assertEquals("FAILED", db.refundPhase(refund));
        assertEquals(800, db.refundedAmount(order), "the lost refund's 1300 is given back");
        assertEquals(earlierId, db.string("SELECT acknowledged FROM refund_settlement WHERE refund_id = ?", refund));
        assertEquals(List.of(earlierId), settled.jsonPath().getList("acknowledged"));
        assertEquals(List.of(earlierId), Api.as(OPS).get("/refunds/" + refund).jsonPath().getList("settlement.acknowledged"),
                "the refund shows what its settlement acknowledged");
    }

    /**
     * The processor's event named an outcome of this very refund that payonce did not take (a failed
     * refund of another amount under its key, kept as CONTRADICTING): whatever the totals say, and
     * whatever is acknowledged, not refunded is refused until ops reconcile the refund itself.
     */
    @Test
    void notRefundedIsRefusedWhileTheProcessorContradictsThisVeryRefund() {
        Overdue overdue = overdue(1240, Fault.ERROR_BEFORE_CHARGE);
        String contradicting = "re_contradicting_" + overdue.refund();
        Response event = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "refund.failed", new JsonObject().put("id", contradicting)
                .put("object", "refund").put("charge", overdue.chargeId()).put("amount", 1).put("currency", "eur").put("status", "failed")
                .put("failure_code", "reversed").put("idempotency_key", overdue.processorKey())));
        assertEquals("CONTRADICTING", event.jsonPath().getString("outcome"), "set-up: " + event.asString());

        Response refused = settle(OPS, overdue.refund(), Api.newKey(), notRefunded());
        Response stillRefused = settle(OPS, overdue.refund(), Api.newKey(), notRefundedAcknowledging(contradicting));

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertTrue(refused.jsonPath().getString("detail").contains("the processor contradicted this refund (" + contradicting + ")"),
                refused.asString());
        assertRefused(stillRefused, "PROCESSOR_DISAGREES");
        assertNothingSettled(overdue);
    }

    /**
     * A goodwill refund made by hand in the processor's dashboard raised the charge's refunded total
     * beyond what payonce recorded, and not refunded was refused for good. Acknowledged by its id,
     * it counts, and the lost refund is settled; so does one made under an id of 1000 characters,
     * longer than payonce keeps of an id, named as the processor wrote it.
     */
    @ParameterizedTest(name = "an id of {0} characters")
    @ValueSource(ints = {0, 1000})
    void notRefundedIsSettledOnceARefundMadeInTheProcessorsDashboardIsAcknowledged(int idLength) {
        Overdue overdue = overdue(2100, Fault.ERROR_BEFORE_CHARGE);
        String dashboard = processor().refundInDashboard(idLength == 0 ? null : "re_" + "d".repeat(idLength - 3), overdue.chargeId(), 300,
                "EUR").id();

        Response refused = settle(OPS, overdue.refund(), Api.newKey(), notRefunded());
        Response settled = settle(OPS, overdue.refund(), Api.newKey(), notRefundedAcknowledging(dashboard));

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertTrue(refused.jsonPath().getString("detail").contains("300 of 2100 eur refunded, more than the 0 payonce recorded"),
                refused.asString());
        assertEquals(201, settled.statusCode(), settled.asString());
        assertEquals("FAILED", phase(overdue));
        assertEquals(0, db.refundedAmount(overdue.order()), "the lost refund's 2100 is given back");
        assertEquals(dashboard, db.string("SELECT acknowledged FROM refund_settlement WHERE refund_id = ?", overdue.refund()));
    }

    /**
     * The refund was made and its answer lost, and the processor forgot its key: acknowledging that
     * very refund, found by its id, would free an amount the card already got back. It names this
     * refund's reference, and is refused; so is a refund that names nothing and is of this refund's amount.
     */
    @Test
    void anAcknowledgedRefundThatMayBeThisOneIsRefused() {
        Overdue overdue = overdue(1250, Fault.ERROR_AFTER_CHARGE);
        String made = processor().refundUnder(overdue.processorKey()).id();
        processor().retainKeysFor(Duration.ZERO);
        Overdue other = overdue(900, Fault.ERROR_BEFORE_CHARGE);
        String alike = processor().refundInDashboard(other.chargeId(), 900, "EUR").id();

        Response refused = settle(OPS, overdue.refund(), Api.newKey(), notRefundedAcknowledging(made));
        Response alsoRefused = settle(OPS, other.refund(), Api.newKey(), notRefundedAcknowledging(alike));

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertTrue(refused.jsonPath().getString("detail").contains("which is not another refund of charge " + overdue.chargeId()),
                refused.asString());
        assertNothingSettled(overdue);
        assertRefused(alsoRefused, "PROCESSOR_DISAGREES");
        assertNothingSettled(other);
    }

    /**
     * Acknowledged ids may each be as long as the processor wrote them, but take 2,550 characters in
     * all: what the audit row and the key's record of the request hold. Beyond, a 400, not a 500.
     */
    @Test
    void acknowledgedIdsTakeAtMost2550CharactersInAll() {
        Overdue overdue = overdue(700, Fault.ERROR_BEFORE_CHARGE);
        List<String> three = List.of("re_" + "a".repeat(997), "re_" + "b".repeat(997), "re_" + "c".repeat(997));

        Response refused = settle(OPS, overdue.refund(), Api.newKey(), notRefundedAcknowledging(three.toArray(String[]::new)));

        assertEquals(400, refused.statusCode(), refused.asString());
        assertEquals("VALIDATION_FAILED", refused.jsonPath().getString("code"), refused.asString());
        assertNothingSettled(overdue);
    }

    /**
     * A refund payonce recorded as succeeded under an id it could not keep, and a lost refund made
     * under a key the processor forgot since: the charge counts both. Acknowledging the first by its
     * long id would count it twice, once as recorded and once as acknowledged, and the totals would
     * agree while the lost refund's amount, already back on the card, was freed. Red before the rule
     * that refuses such an acknowledgement (201, the card refunded twice).
     */
    @Test
    void anIdPayonceCannotKeepIsNotAcknowledgedBesideARefundRecordedWithoutOne() {
        long order = Buyer.withBalance(0).paidByCard(1000, "tok_visa");
        String chargeId = db.string("SELECT processor_charge_id FROM pay_record WHERE order_id = ? AND phase = 'SUCCEEDED'", order);
        String longId = "re_" + "k".repeat(400);
        processor().plantRefundUnderNextKey(longId, chargeId, 500, "EUR", true);
        assertEquals(201, Api.refund(OPS, order, Api.newKey(), "r-0", 500).statusCode(), "set-up: recorded without its id");
        processor().failNextRefundOf(order, Fault.ERROR_AFTER_CHARGE);
        long lost = Api.refund(OPS, order, Api.newKey(), "r-1", 500).jsonPath().getLong("refundId");
        db.update("UPDATE refund_record SET first_sent_at = first_sent_at - INTERVAL 2 HOUR WHERE id = ?", lost);
        processor().retainKeysFor(Duration.ZERO);

        Response refused = settle(OPS, lost, Api.newKey(), notRefundedAcknowledging(longId));

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertTrue(refused.jsonPath().getString("detail").contains("under an id it cannot keep"), refused.asString());
        assertEquals("UNKNOWN", db.refundPhase(lost));
        assertEquals(1000, db.refundedAmount(order));
    }

    /**
     * The refund was made and its answer lost, and by the time an operator looks the processor has
     * forgotten the refund's key, as processors do after a day: the key finds nothing, but the charge
     * still counts the refund, and the card is not refunded a second time through a freed amount.
     */
    @Test
    void notRefundedIsRefusedForARefundMadeUnderAKeyTheProcessorForgot() {
        Overdue overdue = overdue(1250, Fault.ERROR_AFTER_CHARGE);
        processor().retainKeysFor(Duration.ZERO);
        assertNull(processor().refundUnder(overdue.processorKey()), "the processor forgot the refund's key");

        Response refused = settle(OPS, overdue.refund(), Api.newKey(), notRefunded());

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertTrue(refused.jsonPath().getString("detail").contains("under the refund's key: no refund; its charge by id: " + overdue.chargeId()
                + " succeeded, 1250 of 1250 eur refunded, more than the 0 payonce recorded"), refused.asString());
        assertNothingSettled(overdue);
    }

    /**
     * A gateway that answers 404 to every refund route makes every key look empty: the charge decides
     * alone, refusing the refund that was made and settling the one that never was.
     */
    @Test
    void withEveryRefundLookupAnswered404TheChargeDecides() {
        Overdue made = overdue(1150, Fault.ERROR_AFTER_CHARGE);
        Overdue neverMade = overdue(1150, Fault.ERROR_BEFORE_CHARGE);
        processor().refuseRefundLookups(404);

        Response refused = settle(OPS, made.refund(), Api.newKey(), notRefunded());
        Response settled = settle(OPS, neverMade.refund(), Api.newKey(), notRefunded());

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertNothingSettled(made);
        assertEquals(201, settled.statusCode(), settled.asString());
        assertEquals("FAILED", phase(neverMade));
    }

    /** A wrong processor address answers 404 to everything: no charge is no proof, and an operator is told so rather than asked to retry. */
    @Test
    void notRefundedIsRefusedWhenTheProcessorHasNoSuchCharge() {
        Overdue overdue = overdue(1050, Fault.ERROR_BEFORE_CHARGE);
        processor().refuseEveryCall(404);

        Response refused = settle(OPS, overdue.refund(), Api.newKey(), notRefunded());

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertTrue(refused.jsonPath().getString("detail").contains("its charge by id: no charge " + overdue.chargeId()), refused.asString());
        assertNothingSettled(overdue);
    }

    /**
     * A refund named as this one's, that the processor describes otherwise in what only a refund
     * has: it gave back from another charge, or it says it was made under another key. Its amount,
     * currency and reference are checked for every kind ({@code OperatorSettlementsTest}).
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "another charge, ch_another, ''",
            "another key,    this,       payonce-another-key"})
    void refundedIsRefusedWhenTheNamedRefundIsOfAnotherChargeOrStatesAnotherKey(String description, String charge, String statedKey) {
        Overdue overdue = overdue(1400, Fault.ERROR_BEFORE_CHARGE);
        String chargeId = "this".equals(charge) ? overdue.chargeId() : charge;
        ProcessorSimulator.Refund other = processor().refundFoundOnlyById(chargeId, 1400, "EUR", overdue.reference(),
                statedKey.isEmpty() ? null : statedKey);

        Response refused = settle(OPS, overdue.refund(), Api.newKey(), refunded(other.id()));

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertNothingSettled(overdue);
    }

    /**
     * The refunds a body acknowledges are a not refunded's only, each once, at most ten, each an id
     * payonce keeps: otherwise it is a 400 that records nothing, and the refund stays as it was.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "refunded acknowledging refunds             | {\"outcome\":\"refunded\",\"processorRefundId\":\"re_1\",\"reason\":\"r\",\"acknowledged\":[\"re_2\"]} | VALIDATION_FAILED",
            "one refund acknowledged twice              | {\"outcome\":\"not_refunded\",\"reason\":\"r\",\"acknowledged\":[\"re_2\",\"re_2\"]} | VALIDATION_FAILED",
            "an acknowledged id off the processor path  | {\"outcome\":\"not_refunded\",\"reason\":\"r\",\"acknowledged\":[\"..\"]}        | VALIDATION_FAILED",
            "eleven refunds acknowledged                | {\"outcome\":\"not_refunded\",\"reason\":\"r\",\"acknowledged\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\"]} | VALIDATION_FAILED",
            "an acknowledged refund that is no text     | {\"outcome\":\"not_refunded\",\"reason\":\"r\",\"acknowledged\":[7]}           | MALFORMED_REQUEST"})
    void aBodyThatAcknowledgesRefundsAmissIsRefused(String description, String body, String code) {
        Overdue overdue = overdue(700, Fault.ERROR_BEFORE_CHARGE);

        Response refused = settle(OPS, overdue.refund(), Api.newKey(), body);

        assertEquals(400, refused.statusCode(), refused.asString());
        assertEquals(code, refused.jsonPath().getString("code"), refused.asString());
        assertNothingSettled(overdue);
    }

    /**
     * A refund of the whole of its order settled as refunded leaves the order REFUNDED, as the
     * processor's own success would: its refunds reached its amount, and none waits any more.
     */
    @Test
    void aRefundOfTheWholeOrderSettledAsRefundedLeavesTheOrderRefunded() {
        Overdue overdue = overdue(1900, Fault.ERROR_AFTER_CHARGE);
        String refundId = processor().refundUnder(overdue.processorKey()).id();

        Response settled = settle(OPS, overdue.refund(), Api.newKey(), refunded(refundId));

        assertEquals(201, settled.statusCode(), settled.asString());
        assertEquals("SUCCEEDED", phase(overdue));
        assertEquals("REFUNDED", db.orderStatus(overdue.order()), "its refunds reached its amount, and none waits any more");
        assertEquals(1900, db.refundedAmount(overdue.order()));
    }

    /**
     * A refund of the whole of a card payment whose answer the processor's {@code fault} lost (202,
     * UNKNOWN, its amount reserved), its first send then moved back two hours: past resend-within
     * (1 h) and any lease.
     */
    private Overdue overdue(long amount, Fault fault) {
        long order = Buyer.withBalance(0).paidByCard(amount, "tok_visa");
        processor().failNextRefundOf(order, fault);
        Response accepted = Api.refund(OPS, order, Api.newKey(), "r-1", amount);
        assertEquals(202, accepted.statusCode(), accepted.asString());
        long refund = accepted.jsonPath().getLong("refundId");
        db.update("UPDATE refund_record SET first_sent_at = first_sent_at - INTERVAL 2 HOUR WHERE id = ?", refund);
        return new Overdue(order, refund, amount, db.processorKeyOfRefund(refund),
                db.string("SELECT processor_charge_id FROM pay_record WHERE order_id = ? AND phase = 'SUCCEEDED'", order));
    }

    private static Response settle(String bearer, long refund, String key, Object body) {
        return Api.as(bearer).header("Idempotency-Key", key).contentType(ContentType.JSON).body(body).post("/refunds/" + refund + "/settlement");
    }

    private static Map<String, String> notRefunded() {
        return Map.of("outcome", "not_refunded", "reason", "the processor's dashboard shows no refund for this order");
    }

    /** Not refunded, acknowledging the processor's refunds {@code processorRefundIds} of the charge. */
    private static Map<String, Object> notRefundedAcknowledging(String... processorRefundIds) {
        return Map.of("outcome", "not_refunded", "reason", "reconciled with the processor; ticket OPS-20", "acknowledged",
                List.of(processorRefundIds));
    }

    private static Map<String, String> refunded(String processorRefundId) {
        return Map.of("outcome", "refunded", "processorRefundId", processorRefundId, "reason",
                "the processor's dashboard shows " + processorRefundId);
    }

    private String phase(Overdue overdue) {
        return db.refundPhase(overdue.refund());
    }

    private static void assertRefused(Response answer, String code) {
        assertEquals(409, answer.statusCode(), answer.asString());
        assertEquals(code, answer.jsonPath().getString("code"), answer.asString());
    }

    /** A refusal left the refund as it was: UNKNOWN, its amount reserved on its order, no audit row, no event. */
    private void assertNothingSettled(Overdue overdue) {
        assertEquals("UNKNOWN", phase(overdue));
        assertEquals(overdue.amount(), db.refundedAmount(overdue.order()));
        assertEquals("PAID", db.orderStatus(overdue.order()));
        assertEquals(0, db.count("SELECT COUNT(*) FROM refund_settlement WHERE refund_id = ?", overdue.refund()));
        assertEquals(0, db.count("SELECT COUNT(*) FROM outbox_event WHERE event_type LIKE 'refund.%' AND ref_id = ?",
                Long.toString(overdue.refund())));
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
