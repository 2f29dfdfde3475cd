package io.payonce.payment.card;

import io.payonce.payment.operation.RecoveryJob;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Replays;
import io.payonce.support.Tokens;
import io.quarkus.arc.Arc;
import io.quarkus.scheduler.Scheduler;
import io.quarkus.test.junit.DisabledOnIntegrationTest;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Card payments through the processor simulator, over real HTTP both ways: charged once whatever
 * is lost between payonce and the processor, every unknown outcome recovered, every retry and every
 * other key answered from the payment's state.
 */
@QuarkusTest
@WithTestResource(value = ProcessorSimulatorResource.class, scope = TestResourceScope.GLOBAL)
@ExtendWith(LedgerInvariants.class)
class CardPayTest {

    private static final Duration RECOVERY_BOUND = Duration.ofSeconds(20);

    private final Database db = Database.forTests();
    /**
     * Threads of the test's own for a pay left in flight while the test goes on: a blocking call on
     * ForkJoin's common pool, a single thread on two cores, would starve whatever else runs there.
     */
    private final ExecutorService callers = Executors.newCachedThreadPool();


    /** Whether this application's processor client has made its first call, which loads and connects it. */
    private static boolean warm;

    /**
     * A card pay first, before the tests: the first call of a cold client can outlast the tests'
     * 1 s processor timeout on two busy cores, and a test meant to be charged would get a 202.
     */
    @BeforeEach
    void warmTheProcessorClient() {
        if (!warm) {
            Checkout buyer = Buyer.withBalance(0).checkout(100);
            assertEquals(201, payUntilDefinite(buyer, buyer.key()).statusCode());
            warm = true;
        }
    }

    @AfterEach
    void heal() {
        try {
            processor().heal();
            processor().up();
        } finally {
            callers.shutdownNow();
        }
    }

    @Test
    void aCardPayChargesTheCardOnceAndEveryRepeatGetsThePayment() {
        Checkout buyer = Buyer.withBalance(0).checkout(1999);

        Response first = buyer.payByCard("tok_visa");
        Response retry = buyer.payByCard("tok_visa");
        Response otherKey = Api.payByCard(buyer.bearer(), buyer.order(), Api.newKey(), "tok_visa");

        assertEquals(201, first.statusCode(), first.asString());
        assertEquals("card", first.jsonPath().getString("method"));
        assertEquals("SUCCEEDED", first.jsonPath().getString("phase"));
        Replays.assertReplayOf(first, retry);
        assertEquals(201, otherKey.statusCode(), otherKey.asString());
        assertEquals("true", otherKey.header("Idempotent-Replayed"));
        long payment = first.jsonPath().getLong("paymentId");
        String processorKey = processorKey(buyer, payment);
        ProcessorSimulator.Charge charge = processor().chargeUnder(processorKey);
        assertNotNull(charge, "the charge carries the payment's own key");
        assertEquals(1999, charge.amount());
        assertEquals("EUR", charge.currency());
        assertEquals("order-" + buyer.order(), charge.reference());
        assertEquals(1, processor().chargeRequestsUnder(processorKey), "one request reached the processor");
        assertEquals("PAID", db.orderStatus(buyer.order()));
        assertEquals(0, db.balance(buyer.userId()), "a card pay leaves the balance alone");
        assertEquals(List.of("STARTED", "CHARGE_SENT", "SUCCEEDED"), phases(buyer, payment));
        assertEquals(1, db.count("SELECT COUNT(*) FROM outbox_event WHERE event_type = 'payment.succeeded' AND ref_id = ?",
                Long.toString(payment)), "the payment's event is written with it");
    }

    @Test
    void aDeclinedCardChargesNothingAndTheOrderCanBePaidAgain() {
        Checkout buyer = Buyer.withBalance(0).checkout(500);

        Response declined = buyer.payByCard("tok_decline_generic");
        Response replay = buyer.payByCard("tok_decline_generic");
        Response paid = Api.payByCard(buyer.bearer(), buyer.order(), Api.newKey(), "tok_visa");

        assertEquals(402, declined.statusCode(), declined.asString());
        assertEquals("CARD_DECLINED", declined.jsonPath().getString("code"));
        assertEquals("card_declined", declined.jsonPath().getString("declineCode"));
        Replays.assertReplayOf(declined, replay);
        assertEquals(201, paid.statusCode(), paid.asString());
        assertEquals("PAID", db.orderStatus(buyer.order()));
        assertEquals("DECLINED", db.paymentPhase(declined.jsonPath().getLong("paymentId")));
        assertEquals(1, db.count("SELECT COUNT(*) FROM pay_record WHERE order_id = ? AND phase = 'SUCCEEDED'", buyer.order()));
    }

    /** The processor charged the card and payonce never heard so: 202, then the recovery job finds the charge by its key. */
    @ParameterizedTest
    @EnumSource(value = Fault.class, names = {"TIMEOUT_AFTER_CHARGE", "ERROR_AFTER_CHARGE", "RESET_AFTER_CHARGE"})
    void aChargeWhoseAnswerWasLostIsFoundAndNotMadeAgain(Fault fault) throws Exception {
        Checkout buyer = Buyer.withBalance(0).checkout(700);
        processor().failNextChargeOf(buyer.order(), fault);

        Response accepted = buyer.payByCard("tok_visa");

        assertEquals(202, accepted.statusCode(), accepted.asString());
        assertEquals("UNKNOWN", accepted.jsonPath().getString("phase"));
        long payment = accepted.jsonPath().getLong("paymentId");
        assertEquals("/payments/" + payment, java.net.URI.create(accepted.header("Location")).getPath());
        String processorKey = processorKey(buyer, payment);
        assertNotNull(processor().chargeUnder(processorKey), "the processor had charged the card");

        Response settled = awaitSettled(buyer, payment);

        assertEquals("SUCCEEDED", settled.jsonPath().getString("phase"), settled.asString());
        assertEquals(processor().chargeUnder(processorKey).id(), settled.jsonPath().getString("chargeId"));
        assertEquals(1, processor().chargeRequestsUnder(processorKey), "the recovery looked the charge up and sent nothing");
        assertEquals("PAID", db.orderStatus(buyer.order()));
        assertEquals(List.of("STARTED", "CHARGE_SENT", "UNKNOWN", "SUCCEEDED"), phases(buyer, payment));
        Response retry = buyer.payByCard("tok_visa");
        assertEquals(201, retry.statusCode(), retry.asString());
        assertEquals("true", retry.header("Idempotent-Replayed"));
        assertEquals(payment, retry.jsonPath().getLong("paymentId"));
    }

    /**
     * The processor charged the card and payonce never heard so; the processor's lookups are then
     * refused, with a 400 that names a decline code or a 402 with a failed charge: only a 200 answers a
     * lookup. A refused lookup says nothing of the charge: the payment stays UNKNOWN and its order
     * PAYING until a lookup is answered, which finds the charge. Read as a decline, it would have freed
     * the order of a charged card for a second charge.
     */
    @ParameterizedTest
    @CsvSource({"400, card_declined", "402, "})
    void aLookupRefusedWithADeclineCodeIsNoDecline(int status, String declineCode) throws Exception {
        Checkout buyer = Buyer.withBalance(0).checkout(750);
        processor().failNextChargeOf(buyer.order(), Fault.ERROR_AFTER_CHARGE);
        processor().refuseChargeLookups(status, new JsonObject().put("object", "charge").put("status", "failed")
                .put("decline_code", declineCode).put("reference", "order-" + buyer.order()));

        Response accepted = buyer.payByCard("tok_visa");

        assertEquals(202, accepted.statusCode(), accepted.asString());
        long payment = accepted.jsonPath().getLong("paymentId");
        String processorKey = processorKey(buyer, payment);
        assertNotNull(processor().chargeUnder(processorKey), "set-up: the processor had charged the card");
        // Until the recovery job has looked it up twice more, or settled it, whichever comes first.
        Await.until(() -> asksAgain(payment) >= 3
                        || !"UNKNOWN".equals(db.paymentPhase(payment)), RECOVERY_BOUND,
                "the recovery job's lookups of payment " + payment + ", refused");
        assertEquals("UNKNOWN", db.paymentPhase(payment), "a refused lookup is no decline");
        assertEquals("PAYING", db.orderStatus(buyer.order()));

        processor().heal();
        Response settled = awaitSettled(buyer, payment);

        assertEquals("SUCCEEDED", settled.jsonPath().getString("phase"), settled.asString());
        assertEquals("PAID", db.orderStatus(buyer.order()));
        assertEquals(1, processor().chargeRequestsUnder(processorKey), "the recovery looked the charge up and sent nothing");
    }

    /** The processor declined the card and the answer was lost: the recovery job learns of the decline, and the order is payable again. */
    @Test
    void aDeclineWhoseAnswerWasLostIsFoundAndTheOrderFreed() throws Exception {
        Checkout buyer = Buyer.withBalance(0).checkout(900);
        processor().failNextChargeOf(buyer.order(), Fault.ERROR_AFTER_CHARGE);

        Response accepted = buyer.payByCard("tok_decline_lost");
        long payment = accepted.jsonPath().getLong("paymentId");
        Response settled = awaitSettled(buyer, payment);
        Response retry = buyer.payByCard("tok_decline_lost");
        Response paidByAnotherCard = Api.payByCard(buyer.bearer(), buyer.order(), Api.newKey(), "tok_visa");

        assertEquals(202, accepted.statusCode(), accepted.asString());
        assertEquals("DECLINED", settled.jsonPath().getString("phase"), settled.asString());
        assertEquals("card_declined", settled.jsonPath().getString("declineCode"));
        assertEquals(1, processor().chargeRequestsUnder(processorKey(buyer, payment)), "the recovery looked the decline up and sent nothing");
        assertEquals(402, retry.statusCode(), retry.asString());
        assertEquals("CARD_DECLINED", retry.jsonPath().getString("code"));
        assertEquals("true", retry.header("Idempotent-Replayed"));
        assertEquals(201, paidByAnotherCard.statusCode(), paidByAnotherCard.asString());
        assertEquals("PAID", db.orderStatus(buyer.order()));
    }

    /**
     * The processor holds, under the payment's own key, a charge of another amount, another currency
     * or another order (a key another payment used first): it is not this payment's charge. The
     * payment stays UNKNOWN for an operator, however often the recovery job asks, and is never
     * SUCCEEDED.
     */
    @ParameterizedTest
    @CsvSource({"999, EUR, order-of-the-payment", "1600, USD, order-of-the-payment", "1600, EUR, order-0"})
    void aChargeOfAnotherAmountCurrencyOrOrderUnderThePaymentsKeyNeverSettlesIt(long amount, String currency, String reference) {
        Checkout buyer = Buyer.withBalance(0).checkout(1600);
        processor().plantUnderNextKey(amount, currency, reference.replace("order-of-the-payment", "order-" + buyer.order()));

        Response answer = buyer.payByCard("tok_visa");

        assertEquals(202, answer.statusCode(), answer.asString());
        long payment = answer.jsonPath().getLong("paymentId");
        assertEquals(amount, processor().chargeUnder(processorKey(buyer, payment)).amount(), "the charge was planted under the payment's key");
        Await.until(() -> asksAgain(payment) >= 3, RECOVERY_BOUND,
                "the recovery job asked the processor again about payment " + payment);
        assertEquals("UNKNOWN", db.paymentPhase(payment));
        assertEquals("PAYING", db.orderStatus(buyer.order()));
        assertEquals(202, buyer.payByCard("tok_visa").statusCode());
    }

    /**
     * The processor holds, under the payment's own key, a declined charge of another amount, another
     * currency or another order: not this payment's decline. A decline frees the order for another
     * pay, so this one must not: the payment is UNKNOWN for an operator, its order still PAYING.
     */
    @ParameterizedTest
    @CsvSource({"999, EUR, order-of-the-payment", "1600, USD, order-of-the-payment", "1600, EUR, order-0"})
    void aDeclineOfAnotherAmountCurrencyOrOrderUnderThePaymentsKeyNeverFreesTheOrder(long amount, String currency, String reference) {
        Checkout buyer = Buyer.withBalance(0).checkout(1600);
        processor().plantDeclinedUnderNextKey(amount, currency, reference.replace("order-of-the-payment", "order-" + buyer.order()));

        Response answer = buyer.payByCard("tok_visa");

        assertEquals(202, answer.statusCode(), answer.asString());
        long payment = answer.jsonPath().getLong("paymentId");
        assertEquals("declined", processor().chargeUnder(processorKey(buyer, payment)).status(), "set-up: a decline was planted under the payment's key");
        assertEquals("UNKNOWN", db.paymentPhase(payment));
        assertEquals("the processor reported another charge under this key",
                db.string("SELECT detail FROM payment_phase WHERE payment_id = ? AND phase = 'UNKNOWN'", payment));
        assertEquals("PAYING", db.orderStatus(buyer.order()));
        assertEquals(202, buyer.payByCard("tok_visa").statusCode(), "the key's retry finds the same decline, not this payment's");
    }

    /**
     * The processor answers a payment, and the recovery job's lookups, with a charge of its amount and
     * order whose id another payment recorded already (a processor's bug, or two of its ids alike once
     * kept): not this payment's charge. It stays UNKNOWN for an operator, answered 202, never a 500;
     * the other payment keeps its charge.
     */
    @Test
    void aChargeAnotherPaymentRecordedNeverSettlesThePayment() {
        Checkout paid = Buyer.withBalance(0).checkout(1700);
        Response first = paid.payByCard("tok_visa");
        assertEquals(201, first.statusCode(), first.asString());
        long paidPayment = first.jsonPath().getLong("paymentId");
        String recorded = db.chargeIdOfPayment(paidPayment);
        Checkout buyer = Buyer.withBalance(0).checkout(1700);
        processor().plantUnderNextKey(recorded, 1700, "EUR", "order-" + buyer.order());

        Response answer = buyer.payByCard("tok_visa");

        assertEquals(202, answer.statusCode(), answer.asString());
        long payment = answer.jsonPath().getLong("paymentId");
        assertEquals("the processor reported a charge already recorded on another payment",
                db.string("SELECT detail FROM payment_phase WHERE payment_id = ? AND phase = 'UNKNOWN'", payment));
        Await.until(() -> asksAgain(payment) >= 3, RECOVERY_BOUND,
                "the recovery job asked the processor again about payment " + payment);
        assertEquals("UNKNOWN", db.paymentPhase(payment));
        assertNull(db.chargeIdOfPayment(payment));
        assertEquals("PAYING", db.orderStatus(buyer.order()));
        assertEquals(202, buyer.payByCard("tok_visa").statusCode());
        assertEquals(recorded, db.string("SELECT processor_charge_id FROM pay_record WHERE id = ? AND phase = 'SUCCEEDED'", paidPayment));
    }

    /**
     * Two of the processor's charge ids differ only in a character payonce cannot keep ({@code ch/zz…}
     * and {@code ch_zz…}). Reduced to the characters it keeps, the first payment would hold the
     * second's id: the second payment could never be recorded, and a refund of the first order would
     * refund the second buyer's charge. An id payonce cannot keep exactly is not kept: the first
     * payment is paid without one, its refunds are left to the processor (recorded, nothing reserved
     * or sent), and the second payment keeps and refunds its own.
     */
    @Test
    void aChargeIdPayonceCannotKeepExactlyIsNeverKeptSoNoRefundReachesAnotherBuyersCharge() {
        String kept = "ch_zz" + UUID.randomUUID().toString().replace("-", "");
        Checkout first = Buyer.withBalance(0).checkout(1310);
        Checkout second = Buyer.withBalance(0).checkout(1320);
        processor().plantUnderNextKey(kept.replace("ch_", "ch/"), 1310, "EUR", "order-" + first.order());
        Response firstPaid = first.payByCard("tok_visa");
        processor().plantUnderNextKey(kept, 1320, "EUR", "order-" + second.order());
        Response secondPaid = second.payByCard("tok_visa");

        Response firstRefund = Api.refund(Tokens.ops(), first.order(), Api.newKey(), "r-1", 100);
        Response secondRefund = Api.refund(Tokens.ops(), second.order(), Api.newKey(), "r-1", 200);

        assertEquals(201, firstPaid.statusCode(), firstPaid.asString());
        assertEquals(201, secondPaid.statusCode(), secondPaid.asString());
        assertNull(db.string("SELECT processor_charge_id FROM pay_record WHERE order_id = ?", first.order()));
        assertEquals("charge (an id payonce cannot keep)",
                db.string("SELECT p.detail FROM payment_phase p JOIN pay_record r ON r.id = p.payment_id "
                        + "WHERE r.order_id = ? AND p.phase = 'SUCCEEDED'", first.order()));
        assertEquals(kept, db.string("SELECT processor_charge_id FROM pay_record WHERE order_id = ?", second.order()));
        assertEquals(409, firstRefund.statusCode(), firstRefund.asString());
        assertEquals("CHARGE_NOT_RECORDED", firstRefund.jsonPath().getString("code"));
        assertEquals(0, db.count("SELECT COUNT(*) FROM refund_record WHERE order_id = ?", first.order()), "nothing reserved, nothing sent");
        assertEquals(201, secondRefund.statusCode(), secondRefund.asString());
        assertEquals(List.of(200L), processor().refunds().stream().filter(refund -> refund.charge().equals(kept)).map(ProcessorSimulator.Refund::amount)
                .toList(), "the second buyer's charge was refunded by its own refund alone");
    }

    /** No charge was made (the processor failed first, or was down): the recovery job sends the same charge again, under the same key. */
    @Test
    void aChargeThatWasNeverMadeIsSentAgainUnderTheSameKeyOnceTheProcessorIsBack() throws Exception {
        Checkout failedFirst = Buyer.withBalance(0).checkout(300);
        Checkout whileDown = Buyer.withBalance(0).checkout(400);
        processor().failNextChargeOf(failedFirst.order(), Fault.ERROR_BEFORE_CHARGE);

        Response failed = failedFirst.payByCard("tok_visa");
        processor().down();
        Response refused = whileDown.payByCard("tok_visa");
        processor().up();

        assertEquals(202, failed.statusCode(), failed.asString());
        assertEquals(202, refused.statusCode(), refused.asString());
        assertChargedOnceUnderItsKey(failedFirst, failed.jsonPath().getLong("paymentId"), 2);
        assertChargedOnceUnderItsKey(whileDown, refused.jsonPath().getLong("paymentId"), 1);
    }

    /** Settled by the recovery job, with {@code requests} charge requests under the payment's key in all, and one charge. */
    private void assertChargedOnceUnderItsKey(Checkout buyer, long payment, int requests) {
        assertEquals("SUCCEEDED", awaitSettled(buyer, payment).jsonPath().getString("phase"));
        assertEquals("PAID", db.orderStatus(buyer.order()));
        String processorKey = processorKey(buyer, payment);
        assertEquals(1, processor().charges().stream().filter(c -> c.key().equals(processorKey)).count());
        assertEquals(requests, processor().chargeRequestsUnder(processorKey), "the charge's requests, all under its one key");
    }

    /**
     * 16 clicks on one key and 8 other keys, all at once, while the first click's charge is held at the
     * processor, undecided: none is given a payment or makes a charge; once the processor answers, each
     * click asks again: one charge, one payment, every answer the payment.
     */
    @Test
    void aStormOfClicksAndKeysOnOneOrderChargesTheCardOnce() throws Exception {
        Checkout buyer = Buyer.withBalance(0).checkout(2500);
        processor().failNextChargeOf(buyer.order(), Fault.HELD);
        List<String> keys = new ArrayList<>(Collections.nCopies(15, buyer.key())); // the first click is the 16th
        for (int i = 0; i < 8; i++) {
            keys.add(Api.newKey());
        }
        List<Callable<Response>> clicks = new ArrayList<>();
        List<Callable<Response>> storm = new ArrayList<>();
        for (String key : keys) {
            clicks.add(() -> Api.payByCard(buyer.bearer(), buyer.order(), key, "tok_visa"));
            storm.add(() -> payUntilDefinite(buyer, key));
        }

        CompletableFuture<Response> first = CompletableFuture.supplyAsync(() -> payUntilDefinite(buyer, buyer.key()), callers);
        awaitChargeHeld(buyer);
        List<Response> whileHeld = Concurrently.run(clicks);
        assertFalse(first.isDone(), "set-up: the storm was answered while the first click's charge was held at the processor");
        processor().release(buyer.order());
        List<Response> answers = new ArrayList<>(Concurrently.run(storm));
        answers.add(first.get(RECOVERY_BOUND.toSeconds(), TimeUnit.SECONDS));

        whileHeld.forEach(answer -> assertTrue(answer.statusCode() != 201, "no payment before its charge is decided: " + answer.asString()));
        answers.forEach(answer -> assertEquals(201, answer.statusCode(), answer.asString()));
        long payment = answers.get(0).jsonPath().getLong("paymentId");
        answers.forEach(answer -> assertEquals(payment, answer.jsonPath().getLong("paymentId")));
        assertEquals(1, processor().charges().stream().filter(c -> c.reference().equals("order-" + buyer.order())).count());
        assertEquals(1, db.count("SELECT COUNT(*) FROM pay_record WHERE order_id = ?", buyer.order()));
    }

    /**
     * A pay from the balance and a cancel while the order's card payment waits for its processor: both
     * are told to come back. The charge is held at the processor until both are answered, and the
     * recovery job paused, so that nothing settles the payment first: payonce gives up on the held call
     * after its 1 s timeout (202), and the payment stays pending until the test lets the processor answer.
     */
    @Test
    // It pauses the application's recovery job, which only a test in the application's JVM can reach.
    @DisabledOnIntegrationTest
    void aPayFromTheBalanceWhileACardPayWaitsForItsProcessorIsToldToRetry() throws Exception {
        Checkout buyer = Buyer.withBalance(5000).checkout(800);
        processor().failNextChargeOf(buyer.order(), Fault.HELD);
        Scheduler scheduler = Arc.container().instance(Scheduler.class).get();
        scheduler.pause(RecoveryJob.IDENTITY);
        Response accepted;
        try {
            CompletableFuture<Response> card = CompletableFuture.supplyAsync(() -> buyer.payByCard("tok_visa"), callers);
            awaitChargeHeld(buyer);

            Response balance = Api.pay(buyer.bearer(), buyer.order(), Api.newKey());
            Response cancel = Api.as(buyer.bearer()).header("Idempotency-Key", Api.newKey()).post("/orders/" + buyer.order() + "/cancel");
            accepted = card.get(RECOVERY_BOUND.toSeconds(), TimeUnit.SECONDS);
            assertEquals(1, processor().heldChargesOf(buyer.order()),
                    "set-up: the pay, the cancel and the card pay were answered while its charge was held at the processor");

            assertEquals(409, balance.statusCode(), balance.asString());
            assertEquals("CARD_PAYMENT_PENDING", balance.jsonPath().getString("code"));
            assertEquals(409, cancel.statusCode(), cancel.asString());
            assertEquals("CARD_PAYMENT_PENDING", cancel.jsonPath().getString("code"), "a cancel is told to come back, not refused for good");
            assertEquals("1", cancel.header("Retry-After"));
            assertEquals(202, accepted.statusCode(), accepted.asString());
        } finally {
            processor().release(buyer.order());
            scheduler.resume(RecoveryJob.IDENTITY);
        }
        awaitSettled(buyer, accepted.jsonPath().getLong("paymentId"));
        assertEquals(5000, db.balance(buyer.userId()), "the balance paid nothing");
    }

    @Test
    void theKeyIsBoundToTheMethodAndAnEmptyBodyIsABalancePay() {
        Checkout buyer = Buyer.withBalance(1000).checkout(100);

        Response byBalance = Api.pay(buyer.bearer(), buyer.order(), buyer.key());
        Response sameKeyByCard = buyer.payByCard("tok_visa");
        Response sameKeyNamingTheBalance = Api.as(buyer.bearer()).header("Idempotency-Key", buyer.key()).contentType(ContentType.JSON)
                .body(Map.of("method", "balance")).post("/orders/" + buyer.order() + "/pay");

        assertEquals(201, byBalance.statusCode(), byBalance.asString());
        assertEquals("balance", byBalance.jsonPath().getString("method"));
        assertEquals(422, sameKeyByCard.statusCode(), sameKeyByCard.asString());
        assertEquals("IDEMPOTENCY_KEY_REUSED", sameKeyByCard.jsonPath().getString("code"));
        Replays.assertReplayOf(byBalance, sameKeyNamingTheBalance);
    }

    @Test
    void aPaymentIsShownToItsOwnerAndOpsAndToNobodyElse() {
        Checkout buyer = Buyer.withBalance(0).checkout(250);
        long payment = buyer.payByCard("tok_visa").jsonPath().getLong("paymentId");

        Response owner = Api.as(buyer.bearer()).get("/payments/" + payment);
        Response ops = Api.as(Tokens.ops()).get("/payments/" + payment);
        Response stranger = Api.as(Tokens.user(Tokens.newUserId())).get("/payments/" + payment);
        Response missing = Api.as(Tokens.ops()).get("/payments/" + Long.MAX_VALUE);

        assertEquals(200, owner.statusCode(), owner.asString());
        assertEquals("SUCCEEDED", owner.jsonPath().getString("phase"));
        assertEquals(250, owner.jsonPath().getLong("amount"));
        assertNull(owner.jsonPath().get("cardToken"), "the card token is never shown");
        assertEquals(owner.asString(), ops.asString());
        assertEquals(404, stranger.statusCode(), stranger.asString());
        assertEquals("PAYMENT_NOT_FOUND", stranger.jsonPath().getString("code"));
        assertEquals(404, missing.statusCode(), missing.asString());
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }

    /** Returns once the processor holds the order's charge ({@link Fault#HELD}): the card pay's charge reached it, and waits there. */
    private static void awaitChargeHeld(Checkout buyer) {
        Await.until(() -> processor().heldChargesOf(buyer.order()) == 1, Duration.ofSeconds(10),
                "the charge of order " + buyer.order() + " held at the processor");
    }

    /** Pays as a patient client: again with the same key while told to retry later or that the outcome is not known yet. */
    private static Response payUntilDefinite(Checkout buyer, String key) {
        return Await.until(() -> Api.payByCard(buyer.bearer(), buyer.order(), key, "tok_visa"),
                answer -> answer.statusCode() != 202 && answer.header("Retry-After") == null, RECOVERY_BOUND,
                "a definite answer to the card pay of order " + buyer.order());
    }

    /** Reads the payment until its phase is definite, each UNKNOWN due for the recovery job at once; fails after the recovery bound. */
    private Response awaitSettled(Checkout buyer, long payment) {
        return Await.until(() -> {
            db.endBackoffOfPayment(payment);
            return Api.as(buyer.bearer()).get("/payments/" + payment);
        }, read -> {
            assertEquals(200, read.statusCode(), read.asString());
            return List.of("SUCCEEDED", "DECLINED").contains(read.jsonPath().getString("phase"));
        }, RECOVERY_BOUND, "payment " + payment + " SUCCEEDED or DECLINED");
    }

    /** The payment's attempts so far, its UNKNOWN due for the recovery job's next run. */
    private long asksAgain(long payment) {
        db.endBackoffOfPayment(payment);
        return db.chargeAttempts(payment);
    }

    private static String processorKey(Checkout buyer, long payment) {
        return Api.as(buyer.bearer()).get("/payments/" + payment).jsonPath().getString("processorKey");
    }

    private static List<String> phases(Checkout buyer, long payment) {
        return Api.as(buyer.bearer()).get("/payments/" + payment).jsonPath().getList("history.phase");
    }
}
