package io.payonce.payment.card;

import io.payonce.idempotency.IdempotencyKey;
import io.payonce.payment.operation.RecoveryJob;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.PausedRecoveryJob;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.RowHolder;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.LockWaits;
import io.payonce.support.Replays;
import io.payonce.support.Tokens;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
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
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ops settle a card payment the processor cannot account for, against the processor simulator: the
 * payment's answer is lost (202, UNKNOWN), and its first send is moved back beyond resend-within, as
 * an hour of the recovery job finding nothing under its key would leave it. The recovery job is paused
 * so that nothing but the test moves the payment, except where a test races it on purpose. The races
 * are set up by holding the payment's row until every racer waits for it; payonce's bounds outlast that.
 */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@WithTestResource(value = ProcessorSimulatorResource.class, scope = TestResourceScope.GLOBAL)
@ExtendWith(LedgerInvariants.class)
@PausedRecoveryJob
class OperatorSettlementTest {

    /** How an operator's compare-and-set on a payment begins ({@code OperatorSettlementRepository}). */
    private static final String SETTLING = "UPDATE pay_record SET phase = ";

    private final Database db = Database.forTests();

    @Inject
    RecoveryJob recovery;

    @Inject
    CardPaymentRepository cards;

    @Inject
    Pool pool;

    @AfterEach
    void healAndResume() {
        processor().heal();
        processor().up();
    }

    /** A payment payonce lost the answer of; {@code processorKey} is its charge's key at the processor. */
    record Overdue(Checkout buyer, long payment, String processorKey) {
    }

    @Test
    void settledAsNotChargedTheOrderIsUnpaidAgainAndTheClientsKeyAnswersDeclined() {
        Overdue overdue = overdue(1500, Fault.ERROR_BEFORE_CHARGE);
        String operator = "ops-" + UUID.randomUUID();
        String ops = Tokens.ops(operator);
        String key = Api.newKey();

        Response settled = settle(ops, overdue.payment(), key, notCharged());
        Response replay = settle(ops, overdue.payment(), key, notCharged());
        Response clientsRetry = overdue.buyer().payByCard("tok_visa");
        Response paidAgain = Api.payByCard(overdue.buyer().bearer(), overdue.buyer().order(), Api.newKey(), "tok_visa");

        assertEquals(201, settled.statusCode(), settled.asString());
        assertEquals("not_charged", settled.jsonPath().getString("outcome"));
        assertEquals("DECLINED", settled.jsonPath().getString("phase"));
        assertEquals("under the payment's key: no charge; charges for order-" + overdue.buyer().order() + ": none",
                settled.jsonPath().getString("processorSaid"));
        Replays.assertReplayOf(settled, replay);
        assertEquals(402, clientsRetry.statusCode(), clientsRetry.asString());
        assertEquals("CARD_DECLINED", clientsRetry.jsonPath().getString("code"));
        assertEquals("settled_not_charged", clientsRetry.jsonPath().getString("declineCode"));
        assertEquals("true", clientsRetry.header("Idempotent-Replayed"), "the key's answer was stored with the settlement");
        assertEquals("DECLINED", phase(overdue));
        assertEquals(201, paidAgain.statusCode(), "the order can be paid again: " + paidAgain.asString());
        assertEquals("PAID", db.orderStatus(overdue.buyer().order()));
        assertNull(processor().chargeUnder(overdue.processorKey()), "nothing was charged under the settled payment's key");
        assertAudited(overdue, operator, key, "not_charged", null);
        assertEquals(0, events(overdue, "payment.succeeded"));
    }

    @Test
    void settledAsChargedByAChargeTheProcessorFindsOnlyByItsIdTheOrderIsPaid() {
        Overdue overdue = overdue(1700, Fault.ERROR_BEFORE_CHARGE);
        ProcessorSimulator.Charge charge = processor().chargeWithoutKey(1700, "EUR", "order-" + overdue.buyer().order());
        String operator = "ops-" + UUID.randomUUID();
        String ops = Tokens.ops(operator);
        String key = Api.newKey();

        Response settled = settle(ops, overdue.payment(), key, charged(charge.id()));
        Response clientsRetry = overdue.buyer().payByCard("tok_visa");

        assertEquals(201, settled.statusCode(), settled.asString());
        assertEquals("SUCCEEDED", settled.jsonPath().getString("phase"));
        assertEquals(charge.id(), settled.jsonPath().getString("chargeId"));
        assertEquals("by id: " + charge.id() + " succeeded, 1700 eur for order-" + overdue.buyer().order()
                + "; under the payment's key: no charge", settled.jsonPath().getString("processorSaid"));
        assertEquals(201, clientsRetry.statusCode(), clientsRetry.asString());
        assertEquals("SUCCEEDED", clientsRetry.jsonPath().getString("phase"));
        assertEquals("true", clientsRetry.header("Idempotent-Replayed"));
        assertEquals("PAID", db.orderStatus(overdue.buyer().order()));
        assertEquals(charge.id(), db.chargeIdOfPayment(overdue.payment()));
        assertEquals(List.of("STARTED", "CHARGE_SENT", "UNKNOWN", "SUCCEEDED"), history(overdue));
        assertAudited(overdue, operator, key, "charged", charge.id());
        assertEquals(1, events(overdue, "payment.succeeded"), "the money moved: the event every charged card payment has");
    }

    /** The processor holds the charge under the payment's key too, and it is the one named. */
    @Test
    void settledAsChargedByTheChargeUnderThePaymentsOwnKey() {
        Overdue overdue = overdue(1900, Fault.ERROR_AFTER_CHARGE);
        String chargeId = processor().chargeUnder(overdue.processorKey()).id();

        Response settled = settle(Tokens.ops(), overdue.payment(), Api.newKey(), charged(chargeId));

        assertEquals(201, settled.statusCode(), settled.asString());
        assertTrue(settled.jsonPath().getString("processorSaid").endsWith("under the payment's key: " + chargeId + " succeeded, 1900 eur for order-"
                + overdue.buyer().order()), settled.asString());
        assertEquals("PAID", db.orderStatus(overdue.buyer().order()));
    }

    @Test
    void opsSeeTheSettlementInThePaymentAndItsOwnerDoesNot() {
        Overdue overdue = overdue(1100, Fault.ERROR_BEFORE_CHARGE);
        String operator = "ops-" + UUID.randomUUID();
        assertEquals(201, settle(Tokens.ops(operator), overdue.payment(), Api.newKey(), notCharged()).statusCode());

        Response forOps = Api.as(Tokens.ops()).get("/payments/" + overdue.payment());
        Response forOwner = Api.as(overdue.buyer().bearer()).get("/payments/" + overdue.payment());

        assertEquals(200, forOps.statusCode(), forOps.asString());
        assertEquals("not_charged", forOps.jsonPath().getString("settlement.outcome"));
        assertEquals(operator, forOps.jsonPath().getString("settlement.settledBy"));
        assertEquals("the processor's dashboard shows nothing for this order", forOps.jsonPath().getString("settlement.reason"));
        assertEquals("under the payment's key: no charge; charges for order-" + overdue.buyer().order() + ": none",
                forOps.jsonPath().getString("settlement.processorSaid"));
        assertNotNull(forOps.jsonPath().getString("settlement.at"));
        assertEquals(200, forOwner.statusCode(), forOwner.asString());
        assertNull(forOwner.jsonPath().get("settlement"), "staff and their words are not the owner's business");
        assertEquals("DECLINED", forOwner.jsonPath().getString("phase"));
    }

    @Test
    void notChargedIsRefusedWhileTheProcessorHoldsAChargeUnderThePaymentsKeyAndTheKeyStaysFree() {
        Overdue overdue = overdue(1300, Fault.ERROR_AFTER_CHARGE);
        String chargeId = processor().chargeUnder(overdue.processorKey()).id();
        String ops = Tokens.ops();
        String key = Api.newKey();

        Response refused = settle(ops, overdue.payment(), key, notCharged());

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertTrue(refused.jsonPath().getString("detail").contains("under the payment's key: " + chargeId + " succeeded"), refused.asString());
        assertNothingSettled(overdue);
        Response corrected = settle(ops, overdue.payment(), key, charged(chargeId));
        assertEquals(201, corrected.statusCode(), "a refusal is not stored under the key: " + corrected.asString());
    }

    /**
     * The processor has forgotten the payment's key, as the well-known ones do after a day: its key
     * holds nothing, yet the card was charged. The processor's list of the order's charges shows it,
     * and not charged is refused; freed, the order would be paid, and the card charged, a second time.
     */
    @Test
    void notChargedIsRefusedWhenTheProcessorForgotTheKeyButListsACharge() {
        Overdue overdue = overdue(1250, Fault.ERROR_AFTER_CHARGE);
        String chargeId = processor().chargeUnder(overdue.processorKey()).id();
        processor().retainKeysFor(Duration.ofMillis(1));
        Await.until(() -> processor().chargeUnder(overdue.processorKey()) == null, Duration.ofSeconds(5), "the processor forgets the key");

        Response refused = settle(Tokens.ops(), overdue.payment(), Api.newKey(), notCharged());
        Response payAgain = Api.payByCard(overdue.buyer().bearer(), overdue.buyer().order(), Api.newKey(), "tok_visa");

        assertRefused(refused, "PROCESSOR_DISAGREES");
        String detail = refused.jsonPath().getString("detail");
        assertTrue(detail.contains("under the payment's key: no charge"), detail);
        assertTrue(detail.contains("charges for order-" + overdue.buyer().order() + ": " + chargeId + " succeeded, 1250 eur"), detail);
        assertNothingSettled(overdue);
        assertEquals(409, payAgain.statusCode(), "the order still waits for its payment: " + payAgain.asString());
        assertEquals(1, processor().charges().stream().filter(charge -> charge.reference().equals("order-" + overdue.buyer().order())
                && charge.status().equals("succeeded")).count(), "the card was charged once");
    }

    /**
     * A processor that gives no list of the order's charges (a gateway answering 404 to every lookup,
     * or a processor without the search) leaves an empty key as the only proof, which proves nothing:
     * not charged is refused, and the refusal says why.
     */
    @Test
    void notChargedIsRefusedWithoutTheProcessorsListOfTheOrdersCharges() {
        Overdue overdue = overdue(1260, Fault.ERROR_BEFORE_CHARGE);
        processor().refuseChargeLookups(404, new JsonObject().put("error", "not_found"));

        Response refused = settle(Tokens.ops(), overdue.payment(), Api.newKey(), notCharged());

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertTrue(refused.jsonPath().getString("detail").contains("no list of the charges for order-" + overdue.buyer().order()
                + " (the processor answered 404 to the search)"), refused.asString());
        assertNothingSettled(overdue);
    }

    /**
     * The processor's search answers with something other than one whole list of the order's charges,
     * none of them taken: not charged is refused, as an outage while asking again may help. {@code
     * {order}} in the body stands for the payment's order.
     */
    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "a list that goes on                | 200 | {'data':[],'has_more':true}                     | 409 | PROCESSOR_DISAGREES   | not one whole list",
            "a list that does not say it ends   | 200 | {'data':[]}                                      | 409 | PROCESSOR_DISAGREES   | not one whole list",
            "no list at all                     | 200 | {'data':{},'has_more':false}                     | 409 | PROCESSOR_DISAGREES   | not one whole list",
            "another order's charge listed      | 200 | {'data':[{'id':'ch_o','status':'succeeded','amount':1270,'currency':'eur','reference':'order-0'}],'has_more':false} | 409 | PROCESSOR_DISAGREES | the search listed a charge for order-0",
            "a pending charge of the order      | 200 | {'data':[{'id':'ch_p','status':'pending','amount':1270,'currency':'eur','reference':'order-{order}'}],'has_more':false} | 409 | PROCESSOR_DISAGREES | a charge not yet settled",
            "a charge naming no order           | 200 | {'data':[{'id':'ch_n','status':'succeeded','amount':1270,'currency':'eur'}],'has_more':false} | 409 | PROCESSOR_DISAGREES | ch_n succeeded",
            "a refusal of the search            | 400 | {'error':'unknown parameter'}                   | 409 | PROCESSOR_DISAGREES   | answered 400 to the search",
            "the processor down for the search  | 503 | {'error':'unavailable'}                         | 503 | PROCESSOR_UNAVAILABLE | answered 503 to the search",
            "too many requests                  | 429 | {'error':'rate_limited'}                        | 503 | PROCESSOR_UNAVAILABLE | answered 429 to the search"})
    void notChargedIsRefusedWithoutOneWholeListOfTheOrdersChargesNoneTaken(String description, int status, String body, int answered,
                                                                           String code, String detail) {
        Overdue overdue = overdue(1270, Fault.ERROR_BEFORE_CHARGE);
        processor().answerChargeSearchWith(status,
                new JsonObject(body.replace('\'', '"').replace("{order}", Long.toString(overdue.buyer().order()))));

        Response refused = settle(Tokens.ops(), overdue.payment(), Api.newKey(), notCharged());

        assertEquals(answered, refused.statusCode(), refused.asString());
        assertEquals(code, refused.jsonPath().getString("code"), refused.asString());
        assertTrue(refused.jsonPath().getString("detail").contains(detail), refused.asString());
        assertNothingSettled(overdue);
    }

    /**
     * Every earlier pay of the order was declined, more of them than the audit row could describe one
     * by one, under ids as long as a processor may make them: not charged is settled, and the audit
     * row names the first few and counts the rest, within its column.
     */
    @Test
    void declinesAloneLetNotChargedThroughAndTheAuditRowCountsThem() {
        Overdue overdue = overdue(1280, Fault.ERROR_BEFORE_CHARGE);
        JsonArray declines = new JsonArray();
        for (int i = 0; i < 40; i++) {
            declines.add(new JsonObject().put("id", "ch_" + i + "_" + "d".repeat(240)).put("status", "declined").put("decline_code", "card_declined")
                    .put("amount", 1280).put("currency", "eur").put("reference", "order-" + overdue.buyer().order()));
        }
        processor().answerChargeSearchWith(200, new JsonObject().put("object", "list").put("data", declines).put("has_more", false));

        Response settled = settle(Tokens.ops(), overdue.payment(), Api.newKey(), notCharged());

        assertEquals(201, settled.statusCode(), settled.asString());
        String said = db.string("SELECT processor_said FROM operator_settlement WHERE payment_id = ?", overdue.payment());
        assertTrue(said.length() <= 1000, said.length() + " characters");
        assertTrue(said.contains("ch_0_"), said);
        assertTrue(said.contains(" declined, card_declined, 1280 eur for order-" + overdue.buyer().order()), "a decline says what it was: " + said);
        assertTrue(said.startsWith("under the payment's key: no charge; charges for order-" + overdue.buyer().order()), said);
        assertEquals("DECLINED", phase(overdue));
    }

    /** A charge named as this payment's, that the processor describes otherwise. */
    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "another amount,    1401, EUR, true",
            "another currency,  1400, USD, true",
            "another order,     1400, EUR, false"})
    void chargedIsRefusedWhenTheNamedChargeIsNotThisPayments(String description, long amount, String currency, boolean thisOrder) {
        Overdue overdue = overdue(1400, Fault.ERROR_BEFORE_CHARGE);
        String reference = "order-" + (thisOrder ? overdue.buyer().order() : overdue.buyer().order() + 1);
        ProcessorSimulator.Charge other = processor().chargeWithoutKey(amount, currency, reference);

        Response refused = settle(Tokens.ops(), overdue.payment(), Api.newKey(), charged(other.id()));

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertNothingSettled(overdue);
    }

    @Test
    void chargedIsRefusedForAChargeTheProcessorDoesNotKnowOrThatItDeclined() {
        Overdue overdue = overdue(1200, Fault.ERROR_BEFORE_CHARGE);
        Overdue declined = overdue(1200, Fault.ERROR_AFTER_CHARGE, "tok_decline_lost");
        String declinedCharge = processor().chargeUnder(declined.processorKey()).id();

        Response unknown = settle(Tokens.ops(), overdue.payment(), Api.newKey(), charged("ch_nobody_made_this"));
        Response declinedOne = settle(Tokens.ops(), declined.payment(), Api.newKey(), charged(declinedCharge));

        assertRefused(unknown, "PROCESSOR_DISAGREES");
        assertTrue(unknown.jsonPath().getString("detail").contains("by id: no charge"), unknown.asString());
        assertRefused(declinedOne, "PROCESSOR_DISAGREES");
        assertTrue(declinedOne.jsonPath().getString("detail").contains(declinedCharge + " declined, card_declined"), declinedOne.asString());
        assertNothingSettled(overdue);
        assertNothingSettled(declined);
    }

    /** The charge named is this payment's amount and order, but the payment's own key holds another: that one is the payment's. */
    @Test
    void chargedIsRefusedWhenThePaymentsKeyHoldsAnotherCharge() {
        Overdue overdue = overdue(1600, Fault.ERROR_AFTER_CHARGE);
        ProcessorSimulator.Charge lookalike = processor().chargeWithoutKey(1600, "EUR", "order-" + overdue.buyer().order());

        Response refused = settle(Tokens.ops(), overdue.payment(), Api.newKey(), charged(lookalike.id()));

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertNothingSettled(overdue);
    }

    /** A charge of this payment's amount that says nothing of what it paid for could be any order's: it is not this one's. */
    @Test
    void chargedIsRefusedForAChargeThatNamesNoOrder() {
        Overdue overdue = overdue(1450, Fault.ERROR_BEFORE_CHARGE);
        ProcessorSimulator.Charge anonymous = processor().chargeWithoutKey(1450, "EUR", null);

        Response refused = settle(Tokens.ops(), overdue.payment(), Api.newKey(), charged(anonymous.id()));

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertNothingSettled(overdue);
    }

    /**
     * One charge pays for one payment: a charge another payment already holds is refused with a clear
     * 409, whatever the processor says of it, and nothing is settled.
     */
    @Test
    void aChargeAnotherPaymentHoldsIsRefused() {
        Overdue holder = overdue(1350, Fault.ERROR_BEFORE_CHARGE);
        Overdue overdue = overdue(1350, Fault.ERROR_BEFORE_CHARGE);
        ProcessorSimulator.Charge charge = processor().chargeWithoutKey(1350, "EUR", "order-" + overdue.buyer().order());
        db.update("UPDATE pay_record SET processor_charge_id = ? WHERE id = ?", charge.id(), holder.payment());
        String key = Api.newKey();

        Response refused = settle(Tokens.ops(), overdue.payment(), key, charged(charge.id()));
        Response again = settle(Tokens.ops(), overdue.payment(), key, charged(charge.id()));

        assertRefused(refused, "CHARGE_ALREADY_RECORDED");
        assertTrue(refused.jsonPath().getString("detail").contains(charge.id()), refused.asString());
        assertRefused(again, "CHARGE_ALREADY_RECORDED");
        assertNothingSettled(overdue);
    }

    /** Every charge id payonce records can be named, dots and colons too; "." and ".." never reach the processor's path. */
    @ParameterizedTest(name = "{0}")
    @CsvSource({"ch_1.a:b, 409", "ch.:-_Z9, 409", "., 400", "'..', 400", "ch/1, 400"})
    void aChargeIdIsNamedInTheCharactersPayonceKeepsOfIt(String chargeId, int status) {
        Overdue overdue = overdue(1250, Fault.ERROR_BEFORE_CHARGE);

        Response answer = settle(Tokens.ops(), overdue.payment(), Api.newKey(), charged(chargeId));

        assertEquals(status, answer.statusCode(), answer.asString());
        assertEquals(status == 409 ? "PROCESSOR_DISAGREES" : "VALIDATION_FAILED", answer.jsonPath().getString("code"), answer.asString());
        assertNothingSettled(overdue);
    }

    @Test
    void aPaymentPayonceMayStillSettleItselfIsNotOverdue() {
        Overdue recent = lost(1000, Fault.ERROR_BEFORE_CHARGE, "tok_visa");
        Overdue neverSent = overdue(1000, Fault.ERROR_BEFORE_CHARGE);
        db.update("UPDATE pay_record SET first_sent_at = NULL WHERE id = ?", neverSent.payment());

        Response tooSoon = settle(Tokens.ops(), recent.payment(), Api.newKey(), notCharged());
        Response notSent = settle(Tokens.ops(), neverSent.payment(), Api.newKey(), notCharged());

        assertRefused(tooSoon, "NOT_OVERDUE");
        assertRefused(notSent, "NOT_OVERDUE");
        assertNothingSettled(recent);
        assertNothingSettled(neverSent);
    }

    @Test
    void aSettledPaymentIsNotSettledAgain() {
        Checkout card = Buyer.withBalance(0).checkout(800);
        long cardPayment = Await.until(() -> card.payByCard("tok_visa"), answer -> answer.statusCode() == 201, Duration.ofSeconds(20),
                "a charged card payment").jsonPath().getLong("paymentId");
        Checkout balance = Buyer.withBalance(800).checkout(800);
        long balancePayment = balance.pay().jsonPath().getLong("paymentId");

        Response charged = settle(Tokens.ops(), cardPayment, Api.newKey(), notCharged());
        Response fromTheBalance = settle(Tokens.ops(), balancePayment, Api.newKey(), notCharged());
        Response missing = settle(Tokens.ops(), Long.MAX_VALUE, Api.newKey(), notCharged());

        assertRefused(charged, "ALREADY_SETTLED");
        assertRefused(fromTheBalance, "ALREADY_SETTLED");
        assertEquals(404, missing.statusCode(), missing.asString());
        assertEquals("PAYMENT_NOT_FOUND", missing.jsonPath().getString("code"));
        assertEquals("PAID", db.orderStatus(card.order()));
        assertEquals(0, db.count("SELECT COUNT(*) FROM operator_settlement WHERE payment_id IN (?, ?)", cardPayment, balancePayment));
    }

    @Test
    void aPaymentIsNotSettledWhileAWorkerHoldsItsLease() {
        Overdue overdue = overdue(900, Fault.ERROR_BEFORE_CHARGE);
        db.update("UPDATE pay_record SET leased_until = NOW(6) + INTERVAL 1 MINUTE WHERE id = ?", overdue.payment());
        String ops = Tokens.ops();
        String key = Api.newKey();

        Response refused = settle(ops, overdue.payment(), key, notCharged());

        assertRefused(refused, "WORKER_HOLDS_LEASE");
        assertEquals("1", refused.header("Retry-After"));
        assertNothingSettled(overdue);
        db.update("UPDATE pay_record SET leased_until = NOW(6) - INTERVAL 1 SECOND WHERE id = ?", overdue.payment());
        assertEquals(201, settle(ops, overdue.payment(), key, notCharged()).statusCode(), "the same request, once the lease has run out");
    }

    /** A worker's step that ends with the outcome still unknown gives its lease back, and only its own. */
    @Test
    void aWorkerGivesBackItsOwnLeaseAndNeverAnotherWorkersOne() {
        Overdue overdue = lost(950, Fault.ERROR_BEFORE_CHARGE, "tok_visa");
        assertEquals(0, leased(overdue), "the request that got the 202 gave its lease back");
        db.update("UPDATE pay_record SET busy_until = NOW(6) - INTERVAL 1 SECOND WHERE id = ?", overdue.payment());
        CardPayment stale = cards.findByOrderAndKey(pool, overdue.buyer().order(), new IdempotencyKey(overdue.buyer().key()))
                .await().atMost(Duration.ofSeconds(5));

        assertTrue(cards.takeLease(pool, stale, Duration.ofMinutes(1)).await().atMost(Duration.ofSeconds(5)), "another worker takes it over");
        CardPayment takenOver = stale.nextAttempt();
        markUnknown(stale);
        assertEquals(1, leased(overdue), "the stale worker's late outcome left the lease of the one that took over");
        markUnknown(takenOver);
        assertEquals(0, leased(overdue), "the worker that holds it gave it back");
    }

    @Test
    void anUnclearProcessorSettlesNothing() {
        Overdue overdue = overdue(850, Fault.ERROR_BEFORE_CHARGE);
        processor().down();

        Response refused = settle(Tokens.ops(), overdue.payment(), Api.newKey(), notCharged());

        processor().up();
        assertEquals(503, refused.statusCode(), refused.asString());
        assertEquals("PROCESSOR_UNAVAILABLE", refused.jsonPath().getString("code"));
        assertEquals("1", refused.header("Retry-After"));
        assertNothingSettled(overdue);
    }

    @Test
    void onlyOpsSettleAndAKeyIsBoundToItsRequest() {
        Overdue overdue = overdue(750, Fault.ERROR_BEFORE_CHARGE);
        String ops = Tokens.ops();
        String key = Api.newKey();

        Response byTheOwner = settle(overdue.buyer().bearer(), overdue.payment(), key, notCharged());
        Response first = settle(ops, overdue.payment(), key, notCharged());
        Response otherRequestSameKey = settle(ops, overdue.payment(), key,
                Map.of("outcome", "not_charged", "reason", "another reason"));

        assertEquals(403, byTheOwner.statusCode(), byTheOwner.asString());
        assertEquals("FORBIDDEN", byTheOwner.jsonPath().getString("code"));
        assertEquals(201, first.statusCode(), first.asString());
        assertEquals(422, otherRequestSameKey.statusCode(), otherRequestSameKey.asString());
        assertEquals("IDEMPOTENCY_KEY_REUSED", otherRequestSameKey.jsonPath().getString("code"));
    }

    /**
     * Six operators at once, each naming the charge the processor finds only by its id, under a key of
     * their own: one settles the payment. (An operator saying not charged is refused before the race
     * now: the processor lists that charge for the order.) The test holds the payment's row until all six, each having found the
     * payment unsettled, wait for it with their compare-and-set, so that it decides and not the first read.
     */
    @Test
    void concurrentSettlementsOfOnePaymentSettleItOnce() throws Exception {
        Overdue overdue = overdue(2000, Fault.ERROR_BEFORE_CHARGE);
        ProcessorSimulator.Charge charge = processor().chargeWithoutKey(2000, "EUR", "order-" + overdue.buyer().order());
        List<Callable<Response>> operators = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            operators.add(() -> settle(Tokens.ops(), overdue.payment(), Api.newKey(), charged(charge.id())));
        }

        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdUntil(db, "pay_record", overdue.payment(), release);
        ExecutorService background = Executors.newSingleThreadExecutor();
        List<Response> answers;
        try {
            Future<List<Response>> settling = background.submit(() -> Concurrently.run(operators));
            assertEquals(6, LockWaits.awaitWaiting(db, "pay_record", overdue.payment(), SETTLING, 6),
                    "set-up: the six settlements found the payment unsettled and wait for its row together");
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
        assertEquals("PAID", db.orderStatus(overdue.buyer().order()));
        assertEquals(1, db.count("SELECT COUNT(*) FROM operator_settlement WHERE payment_id = ?", overdue.payment()));
        assertEquals(1, db.count("SELECT COUNT(*) FROM payment_phase WHERE payment_id = ? AND phase IN ('SUCCEEDED', 'DECLINED')",
                overdue.payment()));
        assertEquals(1, events(overdue, "payment.succeeded"));
    }

    /**
     * Operators settle as charged while the recovery job, whose backoff has run out, finds the same
     * charge under the payment's key. The test holds the payment's row until the job's lease waits for
     * it and the four operators, having found the payment unsettled, wait behind it with their
     * compare-and-set: the job takes the lease first and settles the payment, once; the operators'
     * compare-and-set, on the attempts they read, refuses each of them, and none leaves an audit row.
     */
    @Test
    void settlementsRacingTheRecoveryJobSettleThePaymentOnce() throws Exception {
        Overdue overdue = overdue(2200, Fault.ERROR_AFTER_CHARGE);
        String chargeId = processor().chargeUnder(overdue.processorKey()).id();
        // Its backoff ran out before that of any payment other tests left unsettled: the job takes the
        // longest-waiting first, a batch at a time, and this run of it must take this payment.
        db.update("UPDATE pay_record SET busy_until = '2000-01-01' WHERE id = ?", overdue.payment());
        List<Callable<Response>> operators = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            operators.add(() -> settle(Tokens.ops(), overdue.payment(), Api.newKey(), charged(chargeId)));
        }

        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdUntil(db, "pay_record", overdue.payment(), release);
        ExecutorService background = Executors.newFixedThreadPool(2);
        List<Response> answers;
        try {
            Future<Integer> recovered = background.submit(() -> recovery.recover().await().atMost(Duration.ofSeconds(30)));
            db.awaitWaitingOnRow("pay_record", overdue.payment(), "UPDATE pay_record SET busy_until = ");
            Future<List<Response>> settling = background.submit(() -> Concurrently.run(operators));
            assertEquals(4, LockWaits.awaitWaiting(db, "pay_record", overdue.payment(), SETTLING, 4),
                    "set-up: the four operators found the payment unsettled and wait behind the recovery job's lease");
            release.complete(null);
            answers = settling.get(30, TimeUnit.SECONDS);
            recovered.get(30, TimeUnit.SECONDS);
        } finally {
            release.complete(null); // when the set-up failed too, not after the holder's 30 s
            background.shutdown();
        }
        rowReleased.get(10, TimeUnit.SECONDS);

        answers.forEach(answer -> assertTrue(Set.of("ALREADY_SETTLED", "WORKER_HOLDS_LEASE").contains(answer.jsonPath().getString("code")),
                "the recovery job took the payment first: " + answer.asString()));
        assertEquals("SUCCEEDED", phase(overdue));
        assertEquals("PAID", db.orderStatus(overdue.buyer().order()));
        assertEquals(0, db.count("SELECT COUNT(*) FROM operator_settlement WHERE payment_id = ?", overdue.payment()));
        assertEquals(1, db.count("SELECT COUNT(*) FROM payment_phase WHERE payment_id = ? AND phase = 'SUCCEEDED'", overdue.payment()));
        assertEquals(1, events(overdue, "payment.succeeded"));
        assertEquals(1, processor().chargeRequestsUnder(overdue.processorKey()), "nothing sent again");
    }

    private Overdue overdue(long amount, Fault fault) {
        return overdue(amount, fault, "tok_visa");
    }

    /** As {@link #lost}, its first send then moved back two hours: past resend-within (1 h) and any lease. */
    private Overdue overdue(long amount, Fault fault, String cardToken) {
        Overdue lost = lost(amount, fault, cardToken);
        db.update("UPDATE pay_record SET first_sent_at = first_sent_at - INTERVAL 2 HOUR WHERE id = ?", lost.payment());
        return lost;
    }

    /** A card pay whose answer the processor's {@code fault} lost: 202, UNKNOWN, the order PAYING. */
    private Overdue lost(long amount, Fault fault, String cardToken) {
        Checkout buyer = Buyer.withBalance(0).checkout(amount);
        processor().failNextChargeOf(buyer.order(), fault);
        Response accepted = buyer.payByCard(cardToken);
        assertEquals(202, accepted.statusCode(), accepted.asString());
        long payment = accepted.jsonPath().getLong("paymentId");
        return new Overdue(buyer, payment, db.processorKeyOfPayment(payment));
    }

    private static Response settle(String bearer, long payment, String key, Map<String, String> body) {
        return Api.as(bearer).header("Idempotency-Key", key).contentType(ContentType.JSON).body(body).post("/payments/" + payment + "/settlement");
    }

    private static Map<String, String> notCharged() {
        return Map.of("outcome", "not_charged", "reason", "the processor's dashboard shows nothing for this order");
    }

    private static Map<String, String> charged(String chargeId) {
        return Map.of("outcome", "charged", "chargeId", chargeId, "reason", "the processor's dashboard shows " + chargeId);
    }

    private void markUnknown(CardPayment worker) {
        pool.withTransaction(tx -> cards.markUnknown(tx, worker, Duration.ofMillis(500), Duration.ofSeconds(2), false))
                .await().atMost(Duration.ofSeconds(5));
    }

    private long leased(Overdue overdue) {
        return db.count("SELECT COUNT(*) FROM pay_record WHERE id = ? AND leased_until > NOW(6)", overdue.payment());
    }

    private String phase(Overdue overdue) {
        return db.paymentPhase(overdue.payment());
    }

    private List<String> history(Overdue overdue) {
        return db.strings("SELECT phase FROM payment_phase WHERE payment_id = ? ORDER BY id", overdue.payment());
    }

    private long events(Overdue overdue, String type) {
        return db.count("SELECT COUNT(*) FROM outbox_event WHERE event_type = ? AND ref_id = ?", type, Long.toString(overdue.payment()));
    }

    /** The audit row, and the settlement's one event, say who settled it, under which key, as what, and why. */
    private void assertAudited(Overdue overdue, String operator, String key, String outcome, String chargeId) {
        String audit = "SELECT CONCAT_WS('|', operator_id, idem_key, outcome, COALESCE(charge_id, '-'), reason) FROM operator_settlement "
                + "WHERE payment_id = ?";
        String reason = chargeId == null ? notCharged().get("reason") : charged(chargeId).get("reason");
        assertEquals(String.join("|", operator, key, outcome, chargeId == null ? "-" : chargeId, reason), db.string(audit, overdue.payment()));
        assertEquals(outcome, db.string("SELECT JSON_VALUE(payload, '$.outcome') FROM outbox_event WHERE event_type = "
                + "'payment.settled-by-operator' AND ref_id = ?", Long.toString(overdue.payment())));
        assertEquals(1, events(overdue, "payment.settled-by-operator"));
    }

    private static void assertRefused(Response answer, String code) {
        assertEquals(409, answer.statusCode(), answer.asString());
        assertEquals(code, answer.jsonPath().getString("code"), answer.asString());
    }

    /** A refusal left the payment as it was: UNKNOWN, its order PAYING, no audit row, no event. */
    private void assertNothingSettled(Overdue overdue) {
        assertEquals("UNKNOWN", phase(overdue));
        assertEquals("PAYING", db.orderStatus(overdue.buyer().order()));
        assertEquals(0, db.count("SELECT COUNT(*) FROM operator_settlement WHERE payment_id = ?", overdue.payment()));
        assertEquals(0, db.count("SELECT COUNT(*) FROM outbox_event WHERE event_type LIKE 'payment.%' AND ref_id = ?",
                Long.toString(overdue.payment())));
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
