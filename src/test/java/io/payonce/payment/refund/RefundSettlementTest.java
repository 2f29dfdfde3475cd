package io.payonce.payment.refund;

import io.payonce.payment.operation.RecoveryJob;
import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.PausedRecoveryJob;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Buyer;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.RowHolder;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.LockWaits;
import io.payonce.support.Replays;
import io.payonce.support.Tokens;
import io.payonce.support.Webhooks;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ops settle a refund to the card the processor cannot account for, against the processor simulator:
 * the refund's answer is lost (202, UNKNOWN), and its first send is moved back beyond resend-within,
 * as an hour of the recovery job finding nothing under its key would leave it. The refund recovery
 * job is paused so that nothing but the test moves the refund, except where a test races it on purpose.
 * The races are set up by holding the refund's or its order's row, or its call at the processor,
 * until every racer waits; payonce's bounds outlast those holds.
 */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@WithTestResource(value = ProcessorSimulatorResource.class, scope = TestResourceScope.GLOBAL)
@ExtendWith(LedgerInvariants.class)
@PausedRecoveryJob
class RefundSettlementTest {

    private static final String OPS = Tokens.ops();

    /** How payonce's statement that takes an order's lock begins ({@code OrderRepository}). */
    private static final String ORDER_LOCK = "SELECT o.id, o.order_sn";

    private final Database db = Database.forTests();

    /** Whether this application's processor client has made its first refund, which loads and connects it. */
    private static boolean warm;

    @Inject
    RecoveryJob recovery;

    @Inject
    CardRefundRepository cardRefunds;

    @Inject
    Pool pool;

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
     * card payment, under the client's {@code key}; {@code processorKey} is its key at the processor.
     */
    record Overdue(long order, long refund, String key, String refundNo, long amount, String processorKey, String chargeId) {

        String reference() {
            return "order-" + order + "-refund-" + refundNo;
        }

        Response retriedByItsClient() {
            return Api.refund(OPS, order, key, refundNo, amount);
        }
    }

    @Test
    void settledAsNotRefundedTheRefundFailsItsAmountIsRefundableAgainAndItsKeyAnswersTheFailure() {
        Overdue overdue = overdue(1500, Fault.ERROR_BEFORE_CHARGE);
        String operator = "ops-" + UUID.randomUUID();
        String ops = Tokens.ops(operator);
        String key = Api.newKey();

        Response settled = settle(ops, overdue.refund(), key, notRefunded());
        Response replay = settle(ops, overdue.refund(), key, notRefunded());
        Response clientsRetry = overdue.retriedByItsClient();

        assertEquals(201, settled.statusCode(), settled.asString());
        assertEquals("not_refunded", settled.jsonPath().getString("outcome"));
        assertEquals("FAILED", settled.jsonPath().getString("phase"));
        assertEquals(overdue.refund(), settled.jsonPath().getLong("refundId"));
        assertEquals("under the refund's key: no refund; its charge by id: " + overdue.chargeId() + " succeeded, 0 of 1500 eur refunded, "
                + "as payonce recorded", settled.jsonPath().getString("processorSaid"));
        Replays.assertReplayOf(settled, replay);
        assertEquals(402, clientsRetry.statusCode(), clientsRetry.asString());
        assertEquals("REFUND_FAILED", clientsRetry.jsonPath().getString("code"));
        assertEquals("settled_not_refunded", clientsRetry.jsonPath().getString("failureCode"));
        assertEquals("true", clientsRetry.header("Idempotent-Replayed"), "the key's answer was stored with the settlement");
        assertEquals("FAILED", phase(overdue));
        assertEquals(List.of("STARTED", "SENT", "UNKNOWN", "FAILED"), history(overdue));
        assertEquals(0, db.refundedAmount(overdue.order()), "the reservation is given back");
        assertEquals("PAID", db.orderStatus(overdue.order()));
        assertNull(processor().refundUnder(overdue.processorKey()), "nothing was refunded under the settled refund's key");
        assertAudited(overdue, operator, key, "not_refunded", null);
        assertEquals(0, events(overdue, "refund.created"));
        Response refundedAgain = Api.refund(OPS, overdue.order(), Api.newKey(), "r-again", overdue.amount());
        assertEquals(201, refundedAgain.statusCode(), "the amount is refundable again: " + refundedAgain.asString());
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
     * it counts, and the lost refund is settled.
     */
    @Test
    void notRefundedIsSettledOnceARefundMadeInTheProcessorsDashboardIsAcknowledged() {
        Overdue overdue = overdue(2100, Fault.ERROR_BEFORE_CHARGE);
        String dashboard = processor().refundInDashboard(overdue.chargeId(), 300, "EUR").id();

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

    @Test
    void settledAsRefundedByARefundTheProcessorFindsOnlyByItsIdTheRefundSucceeds() {
        Overdue overdue = overdue(1700, Fault.ERROR_BEFORE_CHARGE);
        ProcessorSimulator.Refund found = processor().refundFoundOnlyById(overdue.chargeId(), 1700, "EUR", overdue.reference(), null);
        String operator = "ops-" + UUID.randomUUID();
        String key = Api.newKey();

        Response settled = settle(Tokens.ops(operator), overdue.refund(), key, refunded(found.id()));
        Response clientsRetry = overdue.retriedByItsClient();

        assertEquals(201, settled.statusCode(), settled.asString());
        assertEquals("SUCCEEDED", settled.jsonPath().getString("phase"));
        assertEquals(found.id(), settled.jsonPath().getString("processorRefundId"));
        assertEquals("by id: " + found.id() + " succeeded, 1700 eur of charge " + overdue.chargeId() + " for " + overdue.reference()
                + "; under the refund's key: no refund", settled.jsonPath().getString("processorSaid"));
        assertEquals(201, clientsRetry.statusCode(), clientsRetry.asString());
        assertEquals("SUCCEEDED", clientsRetry.jsonPath().getString("phase"));
        assertEquals("true", clientsRetry.header("Idempotent-Replayed"));
        assertEquals("REFUNDED", db.orderStatus(overdue.order()), "its refunds reached its amount, and none waits any more");
        assertEquals(found.id(), db.processorRefundIdOf(overdue.refund()));
        assertEquals(List.of("STARTED", "SENT", "UNKNOWN", "SUCCEEDED"), history(overdue));
        assertAudited(overdue, operator, key, "refunded", found.id());
        assertEquals(1, events(overdue, "refund.created"), "the money moved: the event every refund to the card that succeeded has");
    }

    /** The processor holds the refund under the refund's key too, and it is the one named. */
    @Test
    void settledAsRefundedByTheRefundUnderItsOwnKey() {
        Overdue overdue = overdue(1900, Fault.ERROR_AFTER_CHARGE);
        String refundId = processor().refundUnder(overdue.processorKey()).id();

        Response settled = settle(OPS, overdue.refund(), Api.newKey(), refunded(refundId));

        assertEquals(201, settled.statusCode(), settled.asString());
        assertTrue(settled.jsonPath().getString("processorSaid").endsWith("under the refund's key: " + refundId + " succeeded, 1900 eur of charge "
                + overdue.chargeId() + " for " + overdue.reference()), settled.asString());
        assertEquals("SUCCEEDED", phase(overdue));
        assertEquals("REFUNDED", db.orderStatus(overdue.order()));
    }

    @Test
    void notRefundedIsRefusedWhileTheProcessorHoldsARefundUnderItsKeyAndTheKeyStaysFree() {
        Overdue overdue = overdue(1300, Fault.ERROR_AFTER_CHARGE);
        String refundId = processor().refundUnder(overdue.processorKey()).id();
        String key = Api.newKey();

        Response refused = settle(OPS, overdue.refund(), key, notRefunded());

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertTrue(refused.jsonPath().getString("detail").contains("under the refund's key: " + refundId + " succeeded"), refused.asString());
        assertNothingSettled(overdue);
        Response corrected = settle(OPS, overdue.refund(), key, refunded(refundId));
        assertEquals(201, corrected.statusCode(), "a refusal is not stored under the key: " + corrected.asString());
    }

    /** A refund named as this one's, that the processor describes otherwise. */
    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "another amount,    1401, EUR, this,  this,  ''",
            "another currency,  1400, USD, this,  this,  ''",
            "another charge,    1400, EUR, other, this,  ''",
            "another refund,    1400, EUR, this,  other, ''",
            "no reference,      1400, EUR, this,  none,  ''",
            "another key,       1400, EUR, this,  this,  payonce-another-key"})
    void refundedIsRefusedWhenTheNamedRefundIsNotThisOne(String description, long amount, String currency, String charge, String reference,
                                                         String statedKey) {
        Overdue overdue = overdue(1400, Fault.ERROR_BEFORE_CHARGE);
        String chargeId = "this".equals(charge) ? overdue.chargeId() : "ch_another";
        String named = switch (reference) {
            case "this" -> overdue.reference();
            case "other" -> overdue.reference() + "x";
            default -> null;
        };
        ProcessorSimulator.Refund other = processor().refundFoundOnlyById(chargeId, amount, currency, named,
                statedKey.isEmpty() ? null : statedKey);

        Response refused = settle(OPS, overdue.refund(), Api.newKey(), refunded(other.id()));

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertNothingSettled(overdue);
    }

    @Test
    void refundedIsRefusedForARefundTheProcessorDoesNotKnowOrThatFailed() {
        Overdue overdue = overdue(1200, Fault.ERROR_BEFORE_CHARGE);
        Overdue failed = overdue(1200, Fault.ERROR_AFTER_CHARGE, "tok_norefund_lost");
        String failedRefund = processor().refundUnder(failed.processorKey()).id();

        Response unknown = settle(OPS, overdue.refund(), Api.newKey(), refunded("re_nobody_made_this"));
        Response failedOne = settle(OPS, failed.refund(), Api.newKey(), refunded(failedRefund));

        assertRefused(unknown, "PROCESSOR_DISAGREES");
        assertTrue(unknown.jsonPath().getString("detail").contains("by id: no refund"), unknown.asString());
        assertRefused(failedOne, "PROCESSOR_DISAGREES");
        assertTrue(failedOne.jsonPath().getString("detail").contains(failedRefund + " failed, expired_or_canceled_card"), failedOne.asString());
        assertNothingSettled(overdue);
        assertNothingSettled(failed);
    }

    /** The refund named is this one's in every word, but the refund's own key holds another: that one is the refund. */
    @Test
    void refundedIsRefusedWhenTheRefundsKeyHoldsAnotherRefund() {
        Overdue overdue = overdue(1600, Fault.ERROR_AFTER_CHARGE);
        ProcessorSimulator.Refund lookalike = processor().refundFoundOnlyById(overdue.chargeId(), 1600, "EUR", overdue.reference(), null);

        Response refused = settle(OPS, overdue.refund(), Api.newKey(), refunded(lookalike.id()));

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertNothingSettled(overdue);
    }

    /** One refund at the processor settles one refund: one another refund already holds is refused with a clear 409. */
    @Test
    void aProcessorRefundAnotherRefundHoldsIsRefused() {
        Overdue holder = overdue(1350, Fault.ERROR_BEFORE_CHARGE);
        Overdue overdue = overdue(1350, Fault.ERROR_BEFORE_CHARGE);
        ProcessorSimulator.Refund found = processor().refundFoundOnlyById(overdue.chargeId(), 1350, "EUR", overdue.reference(), null);
        db.update("UPDATE refund_record SET processor_refund_id = ? WHERE id = ?", found.id(), holder.refund());
        String key = Api.newKey();

        Response refused = settle(OPS, overdue.refund(), key, refunded(found.id()));
        Response again = settle(OPS, overdue.refund(), key, refunded(found.id()));

        assertRefused(refused, "REFUND_ALREADY_RECORDED");
        assertTrue(refused.jsonPath().getString("detail").contains(found.id()), refused.asString());
        assertRefused(again, "REFUND_ALREADY_RECORDED");
        assertNothingSettled(overdue);
    }

    @Test
    void aRefundPayonceMayStillSettleItselfIsNotOverdue() {
        Overdue recent = lost(1000, Fault.ERROR_BEFORE_CHARGE, "tok_visa");
        Overdue neverSent = overdue(1000, Fault.ERROR_BEFORE_CHARGE);
        db.update("UPDATE refund_record SET first_sent_at = NULL WHERE id = ?", neverSent.refund());

        Response tooSoon = settle(OPS, recent.refund(), Api.newKey(), notRefunded());
        Response notSent = settle(OPS, neverSent.refund(), Api.newKey(), notRefunded());

        assertRefused(tooSoon, "NOT_OVERDUE");
        assertRefused(notSent, "NOT_OVERDUE");
        assertNothingSettled(recent);
        assertNothingSettled(neverSent);
    }

    @Test
    void aSettledRefundIsNotSettledAgain() {
        long cardOrder = Buyer.withBalance(0).paidByCard(800, "tok_visa");
        long cardRefund = Api.refund(OPS, cardOrder, Api.newKey(), "r-1", 800).jsonPath().getLong("refundId");
        Buyer.Checkout balance = Buyer.withBalance(800).checkout(800);
        assertEquals(201, balance.pay().statusCode());
        long balanceRefund = Api.refund(OPS, balance.order(), Api.newKey(), "r-1", 800).jsonPath().getLong("refundId");

        Response refunded = settle(OPS, cardRefund, Api.newKey(), notRefunded());
        Response toTheBalance = settle(OPS, balanceRefund, Api.newKey(), notRefunded());
        Response missing = settle(OPS, Long.MAX_VALUE, Api.newKey(), notRefunded());

        assertRefused(refunded, "ALREADY_SETTLED");
        assertRefused(toTheBalance, "ALREADY_SETTLED");
        assertEquals(404, missing.statusCode(), missing.asString());
        assertEquals("REFUND_NOT_FOUND", missing.jsonPath().getString("code"));
        assertEquals("REFUNDED", db.orderStatus(cardOrder));
        assertEquals(0, db.count("SELECT COUNT(*) FROM refund_settlement WHERE refund_id IN (?, ?)", cardRefund, balanceRefund));
    }

    @Test
    void aRefundIsNotSettledWhileAWorkerHoldsItsLease() {
        Overdue overdue = overdue(900, Fault.ERROR_BEFORE_CHARGE);
        db.update("UPDATE refund_record SET leased_until = NOW(6) + INTERVAL 1 MINUTE WHERE id = ?", overdue.refund());
        String key = Api.newKey();

        Response refused = settle(OPS, overdue.refund(), key, notRefunded());

        assertRefused(refused, "WORKER_HOLDS_LEASE");
        assertEquals("1", refused.header("Retry-After"));
        assertNothingSettled(overdue);
        db.update("UPDATE refund_record SET leased_until = NOW(6) - INTERVAL 1 SECOND WHERE id = ?", overdue.refund());
        assertEquals(201, settle(OPS, overdue.refund(), key, notRefunded()).statusCode(), "the same request, once the lease has run out");
    }

    /**
     * The request holds the refund's lease while it waits for the processor, which holds the call until
     * the test has read the lease, and gives it back with its answer.
     */
    @Test
    void aRefundOnItsWayToTheProcessorIsLeased() throws Exception {
        long order = Buyer.withBalance(0).paidByCard(960, "tok_visa");
        processor().failNextRefundOf(order, Fault.HELD);

        CompletableFuture<Response> refunding = CompletableFuture.supplyAsync(() -> Api.refund(OPS, order, Api.newKey(), "r-1", 960));
        Await.until(() -> processor().heldRefundsOf(order) == 1, Duration.ofSeconds(10), "the refund of order " + order + " held at the processor");
        long refund = db.count("SELECT id FROM refund_record WHERE order_id = ?", order);
        assertEquals("SENT", db.refundPhase(refund), "set-up: the refund's call is on its way");
        long leasedWhileSent = db.count("SELECT COUNT(*) FROM refund_record WHERE id = ? AND phase = 'SENT' AND leased_until > NOW(6)", refund);
        assertFalse(refunding.isDone(), "set-up: the lease was read while the request still waited for the processor");
        processor().release(order);
        Response answered = refunding.get(10, TimeUnit.SECONDS);

        assertEquals(1, leasedWhileSent, "the worker that sends holds the lease");
        assertEquals(201, answered.statusCode(), answered.asString());
        assertEquals(0, db.count("SELECT COUNT(*) FROM refund_record WHERE id = ? AND leased_until > NOW(6)", refund));
    }

    /** The request and the recovery job take the lease, and a worker's step that ends with the outcome unknown gives back its own only. */
    @Test
    void aWorkerGivesBackItsOwnLeaseAndNeverAnotherWorkersOne() {
        Overdue overdue = lost(950, Fault.ERROR_BEFORE_CHARGE, "tok_visa");
        assertEquals(0, leased(overdue), "the request that got the 202 gave its lease back");
        db.update("UPDATE refund_record SET busy_until = NOW(6) - INTERVAL 1 SECOND WHERE id = ?", overdue.refund());
        CardRefund stale = cardRefunds.findByOrderAndNo(pool, overdue.order(), overdue.refundNo()).await().atMost(Duration.ofSeconds(5));

        assertTrue(cardRefunds.takeLease(pool, stale, Duration.ofMinutes(1)).await().atMost(Duration.ofSeconds(5)), "another worker takes it over");
        assertEquals(1, leased(overdue), "taking the refund over takes its lease");
        markUnknown(stale);
        assertEquals(1, leased(overdue), "the stale worker's late outcome left the lease of the one that took over");
        markUnknown(stale.nextAttempt());
        assertEquals(0, leased(overdue), "the worker that holds it gave it back");
    }

    @Test
    void anUnclearProcessorSettlesNothing() {
        Overdue overdue = overdue(850, Fault.ERROR_BEFORE_CHARGE);
        processor().down();

        Response refused = settle(OPS, overdue.refund(), Api.newKey(), notRefunded());

        processor().up();
        assertEquals(503, refused.statusCode(), refused.asString());
        assertEquals("PROCESSOR_UNAVAILABLE", refused.jsonPath().getString("code"));
        assertEquals("1", refused.header("Retry-After"));
        assertNothingSettled(overdue);
    }

    @Test
    void onlyOpsSettleAndAKeyIsBoundToItsRequest() {
        Overdue overdue = overdue(750, Fault.ERROR_BEFORE_CHARGE);
        String buyer = db.string("SELECT user_id FROM orders WHERE id = ?", overdue.order());
        String key = Api.newKey();

        Response byTheBuyer = settle(Tokens.user(buyer), overdue.refund(), key, notRefunded());
        Response byAMerchant = settle(Tokens.lastingAnHour("merchant-" + UUID.randomUUID(), "merchant"), overdue.refund(), key, notRefunded());
        Response first = settle(OPS, overdue.refund(), key, notRefunded());
        Response otherRequestSameKey = settle(OPS, overdue.refund(), key, Map.of("outcome", "not_refunded", "reason", "another reason"));

        assertEquals(403, byTheBuyer.statusCode(), byTheBuyer.asString());
        assertEquals("FORBIDDEN", byTheBuyer.jsonPath().getString("code"));
        assertEquals(403, byAMerchant.statusCode(), byAMerchant.asString());
        assertEquals("FORBIDDEN", byAMerchant.jsonPath().getString("code"));
        assertEquals(201, first.statusCode(), first.asString());
        assertEquals(422, otherRequestSameKey.statusCode(), otherRequestSameKey.asString());
        assertEquals("IDEMPOTENCY_KEY_REUSED", otherRequestSameKey.jsonPath().getString("code"));
    }

    /** A body that does not say one settlement plainly is a 400 that records nothing, and the refund stays as it was. */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "an unknown outcome                         | {\"outcome\":\"charged\",\"reason\":\"r\"}                                  | MALFORMED_REQUEST",
            "refunded without the processor's refund    | {\"outcome\":\"refunded\",\"reason\":\"r\"}                                 | VALIDATION_FAILED",
            "not refunded naming a processor's refund   | {\"outcome\":\"not_refunded\",\"processorRefundId\":\"re_1\",\"reason\":\"r\"} | VALIDATION_FAILED",
            "a refund id that leaves the processor path | {\"outcome\":\"refunded\",\"processorRefundId\":\"..\",\"reason\":\"r\"}   | VALIDATION_FAILED",
            "no reason                                  | {\"outcome\":\"not_refunded\"}                                               | VALIDATION_FAILED",
            "a reason with a line break                 | {\"outcome\":\"not_refunded\",\"reason\":\"a\\nb\"}                        | VALIDATION_FAILED",
            "refunded acknowledging refunds             | {\"outcome\":\"refunded\",\"processorRefundId\":\"re_1\",\"reason\":\"r\",\"acknowledged\":[\"re_2\"]} | VALIDATION_FAILED",
            "one refund acknowledged twice              | {\"outcome\":\"not_refunded\",\"reason\":\"r\",\"acknowledged\":[\"re_2\",\"re_2\"]} | VALIDATION_FAILED",
            "an acknowledged id off the processor path  | {\"outcome\":\"not_refunded\",\"reason\":\"r\",\"acknowledged\":[\"..\"]}        | VALIDATION_FAILED",
            "eleven refunds acknowledged                | {\"outcome\":\"not_refunded\",\"reason\":\"r\",\"acknowledged\":[\"a\",\"b\",\"c\",\"d\",\"e\",\"f\",\"g\",\"h\",\"i\",\"j\",\"k\"]} | VALIDATION_FAILED",
            "an acknowledged refund that is no text     | {\"outcome\":\"not_refunded\",\"reason\":\"r\",\"acknowledged\":[7]}           | MALFORMED_REQUEST"})
    void aBodyThatDoesNotSayOneSettlementIsRefused(String description, String body, String code) {
        Overdue overdue = overdue(700, Fault.ERROR_BEFORE_CHARGE);

        Response refused = Api.as(OPS).header("Idempotency-Key", Api.newKey()).contentType(ContentType.JSON).body(body)
                .post("/refunds/" + overdue.refund() + "/settlement");

        assertEquals(400, refused.statusCode(), refused.asString());
        assertEquals(code, refused.jsonPath().getString("code"), refused.asString());
        assertNothingSettled(overdue);
    }

    /**
     * Six operators at once, half saying refunded and half not refunded, each under a key of their own:
     * one settles the refund. The test holds the refund's order until all six, each having found the
     * refund unsettled, wait for its lock, so that the compare-and-set decides and not the first read.
     */
    @Test
    void concurrentSettlementsOfOneRefundSettleItOnce() throws Exception {
        Overdue overdue = overdue(2000, Fault.ERROR_BEFORE_CHARGE);
        ProcessorSimulator.Refund found = processor().refundFoundOnlyById(overdue.chargeId(), 2000, "EUR", overdue.reference(), null);
        List<Callable<Response>> operators = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            Map<String, String> body = i % 2 == 0 ? refunded(found.id()) : notRefunded();
            operators.add(() -> settle(Tokens.ops(), overdue.refund(), Api.newKey(), body));
        }

        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdUntil(db, "orders", overdue.order(), release);
        ExecutorService background = Executors.newSingleThreadExecutor();
        List<Response> answers;
        try {
            Future<List<Response>> settling = background.submit(() -> Concurrently.run(operators));
            assertEquals(6, LockWaits.awaitWaiting(db, "orders", overdue.order(), ORDER_LOCK, 6),
                    "set-up: the six settlements found the refund unsettled and wait for its order together");
            release.complete(null);
            answers = settling.get(30, TimeUnit.SECONDS);
        } finally {
            release.complete(null); // when the set-up failed too, not after the holder's 30 s
            background.shutdown();
        }
        rowReleased.get(10, TimeUnit.SECONDS);

        List<Response> settled = answers.stream().filter(answer -> answer.statusCode() == 201).toList();
        assertEquals(1, settled.size(), answers.stream().map(Response::asString).toList().toString());
        answers.stream().filter(answer -> answer.statusCode() != 201).forEach(answer -> assertRefused(answer, "ALREADY_SETTLED"));
        boolean refunded = "refunded".equals(settled.get(0).jsonPath().getString("outcome"));
        assertEquals(refunded ? "REFUNDED" : "PAID", db.orderStatus(overdue.order()));
        assertEquals(refunded ? 2000 : 0, db.refundedAmount(overdue.order()));
        assertEquals(1, db.count("SELECT COUNT(*) FROM refund_settlement WHERE refund_id = ?", overdue.refund()));
        assertEquals(1, db.count("SELECT COUNT(*) FROM refund_phase WHERE refund_id = ? AND phase IN ('SUCCEEDED', 'FAILED')",
                overdue.refund()));
        assertEquals(refunded ? 1 : 0, events(overdue, "refund.created"));
        assertEquals(1, events(overdue, "refund.settled-by-operator"));
    }

    /**
     * Operators settle as refunded while the recovery job, whose backoff has run out, finds the same
     * refund under the refund's key. The test holds the refund's row until the job's lease waits for it
     * and every operator, having found the refund unsettled, waits behind it (the first on the refund,
     * the others on its order): the job takes the lease first and settles the refund, once; the
     * operators' compare-and-set, on the attempts they read, refuses each of them, and none leaves an
     * audit row.
     */
    @Test
    void settlementsRacingTheRecoveryJobSettleTheRefundOnce() throws Exception {
        Overdue overdue = overdue(2200, Fault.ERROR_AFTER_CHARGE);
        String refundId = processor().refundUnder(overdue.processorKey()).id();
        // Its backoff ran out before that of any refund other tests left unsettled: the job takes the
        // longest-waiting first, a batch at a time, and this run of it must take this refund.
        db.update("UPDATE refund_record SET busy_until = '2000-01-01' WHERE id = ?", overdue.refund());
        List<Callable<Response>> operators = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            operators.add(() -> settle(Tokens.ops(), overdue.refund(), Api.newKey(), refunded(refundId)));
        }

        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdUntil(db, "refund_record", overdue.refund(), release);
        ExecutorService background = Executors.newFixedThreadPool(2);
        List<Response> answers;
        try {
            Future<Integer> recovered = background.submit(() -> recovery.recover().await().atMost(Duration.ofSeconds(30)));
            db.awaitWaitingOnRow("refund_record", overdue.refund(), "UPDATE refund_record SET busy_until = ");
            Future<List<Response>> settling = background.submit(() -> Concurrently.run(operators));
            long waiting = LockWaits.awaitWaiting(db, "refund_record", overdue.refund(), "UPDATE refund_record SET phase = ", 1)
                    + LockWaits.awaitWaiting(db, "orders", overdue.order(), ORDER_LOCK, 3);
            assertEquals(4, waiting, "set-up: the four operators found the refund unsettled and wait behind the recovery job's lease");
            release.complete(null);
            answers = settling.get(30, TimeUnit.SECONDS);
            recovered.get(30, TimeUnit.SECONDS);
        } finally {
            release.complete(null); // when the set-up failed too, not after the holder's 30 s
            background.shutdown();
        }
        rowReleased.get(10, TimeUnit.SECONDS);

        answers.forEach(answer -> assertTrue(Set.of("ALREADY_SETTLED", "WORKER_HOLDS_LEASE").contains(answer.jsonPath().getString("code")),
                "the recovery job took the refund first: " + answer.asString()));
        assertEquals("SUCCEEDED", phase(overdue));
        assertEquals("REFUNDED", db.orderStatus(overdue.order()));
        assertEquals(0, db.count("SELECT COUNT(*) FROM refund_settlement WHERE refund_id = ?", overdue.refund()));
        assertEquals(1, db.count("SELECT COUNT(*) FROM refund_phase WHERE refund_id = ? AND phase = 'SUCCEEDED'", overdue.refund()));
        assertEquals(1, events(overdue, "refund.created"));
        assertEquals(1, processor().refundRequestsUnder(overdue.processorKey()), "nothing sent again");
    }

    private Overdue overdue(long amount, Fault fault) {
        return overdue(amount, fault, "tok_visa");
    }

    /** As {@link #lost}, its first send then moved back two hours: past resend-within (1 h) and any lease. */
    private Overdue overdue(long amount, Fault fault, String cardToken) {
        Overdue lost = lost(amount, fault, cardToken);
        db.update("UPDATE refund_record SET first_sent_at = first_sent_at - INTERVAL 2 HOUR WHERE id = ?", lost.refund());
        return lost;
    }

    /** A refund of the whole of a card payment whose answer the processor's {@code fault} lost: 202, UNKNOWN, its amount reserved. */
    private Overdue lost(long amount, Fault fault, String cardToken) {
        long order = Buyer.withBalance(0).paidByCard(amount, cardToken);
        String key = Api.newKey();
        processor().failNextRefundOf(order, fault);
        Response accepted = Api.refund(OPS, order, key, "r-1", amount);
        assertEquals(202, accepted.statusCode(), accepted.asString());
        long refund = accepted.jsonPath().getLong("refundId");
        return new Overdue(order, refund, key, "r-1", amount, db.processorKeyOfRefund(refund),
                db.string("SELECT processor_charge_id FROM pay_record WHERE order_id = ? AND phase = 'SUCCEEDED'", order));
    }

    private static Response settle(String bearer, long refund, String key, Map<String, ?> body) {
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

    private void markUnknown(CardRefund worker) {
        pool.withTransaction(tx -> cardRefunds.markUnknown(tx, worker, Duration.ofMillis(500), Duration.ofSeconds(2), false))
                .await().atMost(Duration.ofSeconds(5));
    }

    private long leased(Overdue overdue) {
        return db.count("SELECT COUNT(*) FROM refund_record WHERE id = ? AND leased_until > NOW(6)", overdue.refund());
    }

    private String phase(Overdue overdue) {
        return db.refundPhase(overdue.refund());
    }

    private List<String> history(Overdue overdue) {
        return db.strings("SELECT phase FROM refund_phase WHERE refund_id = ? ORDER BY id", overdue.refund());
    }

    private long events(Overdue overdue, String type) {
        return db.count("SELECT COUNT(*) FROM outbox_event WHERE event_type = ? AND ref_id = ?", type, Long.toString(overdue.refund()));
    }

    /** The audit row, and the settlement's one event, say who settled it, under which key, as what, and why. */
    private void assertAudited(Overdue overdue, String operator, String key, String outcome, String processorRefundId) {
        String audit = "SELECT CONCAT_WS('|', operator_id, idem_key, outcome, COALESCE(processor_refund_id, '-'), reason) "
                + "FROM refund_settlement WHERE refund_id = ?";
        String reason = processorRefundId == null ? notRefunded().get("reason") : refunded(processorRefundId).get("reason");
        assertEquals(String.join("|", operator, key, outcome, processorRefundId == null ? "-" : processorRefundId, reason),
                db.string(audit, overdue.refund()));
        assertEquals(outcome, db.string("SELECT JSON_VALUE(payload, '$.outcome') FROM outbox_event WHERE event_type = "
                + "'refund.settled-by-operator' AND ref_id = ?", Long.toString(overdue.refund())));
        assertEquals("card", db.string("SELECT JSON_VALUE(payload, '$.method') FROM outbox_event WHERE event_type = "
                + "'refund.settled-by-operator' AND ref_id = ?", Long.toString(overdue.refund())));
        assertEquals(1, events(overdue, "refund.settled-by-operator"));
        Response shown = Api.as(OPS).get("/refunds/" + overdue.refund());
        assertEquals(outcome, shown.jsonPath().getString("settlement.outcome"), shown.asString());
        assertEquals(processorRefundId, shown.jsonPath().getString("settlement.processorRefundId"));
        assertEquals(operator, shown.jsonPath().getString("settlement.settledBy"));
        assertEquals(reason, shown.jsonPath().getString("settlement.reason"));
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
