package io.payonce.payment.refund;

import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Buyer;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Replays;
import io.payonce.support.Tokens;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * Refunds of card payments go back to the card through the processor simulator, over real HTTP both
 * ways: refunded once whatever is lost between payonce and the processor, every unknown outcome
 * recovered by a lookup under the refund's key, never more than the charge in all however many
 * refunds race, and whatever the buyer holds (or does not hold) at payonce.
 */
@QuarkusTest
@WithTestResource(value = ProcessorSimulatorResource.class, scope = TestResourceScope.GLOBAL)
@ExtendWith(LedgerInvariants.class)
class RefundToCardTest {

    private static final String OPS = Tokens.ops();
    private static final Duration RECOVERY_BOUND = Duration.ofSeconds(20);

    private final Database db = Database.forTests();

    /** Whether this application's processor client has made its first refund, which loads and connects it. */
    private static boolean warm;

    /** A refund to the card first: a cold client's first call can outlast the tests' 1 s processor timeout. */
    @BeforeEach
    void warmTheProcessorClient() {
        if (!warm) {
            long order = Buyer.withBalance(0).paidByCard(100, "tok_visa");
            assertEquals(201, refundUntilDefinite(order, Api.newKey(), "warm-up", 100).statusCode());
            warm = true;
        }
    }

    @AfterEach
    void heal() {
        processor().heal();
        processor().up();
    }

    @Test
    void aRefundOfACardPaymentGoesBackToTheCardOnceAndEveryRepeatGetsIt() {
        Buyer buyer = Buyer.withBalance(0);
        long order = buyer.paidByCard(1000, "tok_visa");
        String key = Api.newKey();

        Response first = Api.refund(OPS, order, key, "r-1", 300);
        Response retry = Api.refund(OPS, order, key, "r-1", 300);
        Response otherKey = Api.refund(OPS, order, Api.newKey(), "r-1", 300);

        assertEquals(201, first.statusCode(), first.asString());
        assertEquals("card", first.jsonPath().getString("method"));
        assertEquals("SUCCEEDED", first.jsonPath().getString("phase"));
        assertEquals(300, first.jsonPath().getLong("refundedTotal"));
        assertEquals("PAID", first.jsonPath().getString("orderStatus"));
        Replays.assertReplayOf(first, retry);
        Replays.assertReplayOf(first, otherKey);
        long refund = first.jsonPath().getLong("refundId");
        Response details = Api.as(OPS).get("/refunds/" + refund);
        ProcessorSimulator.Refund atProcessor = processor().refundUnder(details.jsonPath().getString("processorKey"));
        assertNotNull(atProcessor, "the refund carries its own key at the processor");
        assertEquals(300, atProcessor.amount());
        assertEquals(chargeOf(order), atProcessor.charge(), "the order's charge is refunded");
        assertEquals(atProcessor.id(), details.jsonPath().getString("processorRefundId"));
        assertEquals(1, processor().refundRequestsUnder(atProcessor.key()), "one request reached the processor");
        assertEquals(List.of("STARTED", "SENT", "SUCCEEDED"), details.jsonPath().getList("history.phase"));
        assertEquals(0, db.balance(buyer.userId()), "a refund to the card leaves the balance alone");
        assertEquals(0, db.entries(buyer.userId()));
        assertEquals("card", db.string("SELECT JSON_VALUE(payload, '$.method') FROM outbox_event WHERE event_type = 'refund.created' "
                + "AND ref_id = ?", Long.toString(refund)), "the refund's event names the card");
    }

    @Test
    void partialRefundsToTheCardAddUpAndTheFullAmountRefundsTheOrder() {
        long order = Buyer.withBalance(0).paidByCard(1000, "tok_visa");

        Response part = Api.refund(OPS, order, Api.newKey(), "r-1", 300);
        Response rest = Api.refund(OPS, order, Api.newKey(), "r-2", 700);
        Response beyond = Api.refund(OPS, order, Api.newKey(), "r-3", 1);

        assertEquals(201, part.statusCode(), part.asString());
        assertEquals("PAID", part.jsonPath().getString("orderStatus"));
        assertEquals(201, rest.statusCode(), rest.asString());
        assertEquals(1000, rest.jsonPath().getLong("refundedTotal"));
        assertEquals("REFUNDED", rest.jsonPath().getString("orderStatus"));
        assertEquals(409, beyond.statusCode(), beyond.asString());
        assertEquals("REFUND_EXCEEDS_PAYMENT", beyond.jsonPath().getString("code"));
        assertEquals(1000, refundedAtProcessor(order));
        assertEquals("REFUNDED", db.orderStatus(order));
    }

    /** The processor refunded the card and payonce never heard so: 202, then the recovery job finds the refund by its key. */
    @ParameterizedTest
    @EnumSource(value = Fault.class, names = {"TIMEOUT_AFTER_CHARGE", "ERROR_AFTER_CHARGE", "RESET_AFTER_CHARGE"})
    void aRefundWhoseAnswerWasLostIsFoundByItsKeyAndNotMadeAgain(Fault fault) {
        long order = Buyer.withBalance(0).paidByCard(700, "tok_visa");
        String key = Api.newKey();
        processor().failNextRefundOf(order, fault);

        Response accepted = Api.refund(OPS, order, key, "r-1", 700);

        assertEquals(202, accepted.statusCode(), accepted.asString());
        assertEquals("UNKNOWN", accepted.jsonPath().getString("phase"));
        long refund = accepted.jsonPath().getLong("refundId");
        assertEquals("/refunds/" + refund, URI.create(accepted.header("Location")).getPath());
        assertEquals("PAID", db.orderStatus(order), "not REFUNDED while its refund may have failed");
        String processorKey = processorKey(refund);
        assertNotNull(processor().refundUnder(processorKey), "the processor had refunded the card");

        Response settled = awaitSettled(refund);

        assertEquals("SUCCEEDED", settled.jsonPath().getString("phase"), settled.asString());
        assertEquals(1, processor().refundRequestsUnder(processorKey), "the recovery looked the refund up and sent nothing");
        assertEquals(List.of("STARTED", "SENT", "UNKNOWN", "SUCCEEDED"), settled.jsonPath().getList("history.phase"));
        assertEquals("REFUNDED", db.orderStatus(order));
        assertEquals(700, refundedAtProcessor(order));
        Response retry = Api.refund(OPS, order, key, "r-1", 700);
        assertEquals(201, retry.statusCode(), retry.asString());
        assertEquals("true", retry.header("Idempotent-Replayed"));
        assertEquals(refund, retry.jsonPath().getLong("refundId"));
    }

    /** No refund was made (the processor failed first, or was down): the recovery job sends the same refund again, under the same key. */
    @Test
    void aRefundThatWasNeverMadeIsSentAgainUnderTheSameKeyOnceTheProcessorIsBack() {
        long failedFirst = Buyer.withBalance(0).paidByCard(300, "tok_visa");
        long whileDown = Buyer.withBalance(0).paidByCard(400, "tok_visa");
        processor().failNextRefundOf(failedFirst, Fault.ERROR_BEFORE_CHARGE);

        Response failed = Api.refund(OPS, failedFirst, Api.newKey(), "r-1", 300);
        processor().down();
        Response refused = Api.refund(OPS, whileDown, Api.newKey(), "r-1", 400);
        processor().up();

        assertEquals(202, failed.statusCode(), failed.asString());
        assertEquals(202, refused.statusCode(), refused.asString());
        assertRefundedOnceUnderItsKey(failed.jsonPath().getLong("refundId"), failedFirst, 300, 2);
        assertRefundedOnceUnderItsKey(refused.jsonPath().getLong("refundId"), whileDown, 400, 1);
    }

    /** The client retries the lost refund itself, with its key: it takes the refund over once its lease has passed, and it is found, not made again. */
    @Test
    void aRetryWithTheSameKeyGetsTheLostRefundOnceItIsFound() {
        long order = Buyer.withBalance(0).paidByCard(600, "tok_visa");
        String key = Api.newKey();
        processor().failNextRefundOf(order, Fault.ERROR_AFTER_CHARGE);

        Response accepted = Api.refund(OPS, order, key, "r-1", 600);
        Response settled = refundUntilDefinite(order, key, "r-1", 600);

        assertEquals(202, accepted.statusCode(), accepted.asString());
        assertEquals(201, settled.statusCode(), settled.asString());
        assertEquals(accepted.jsonPath().getLong("refundId"), settled.jsonPath().getLong("refundId"));
        assertEquals(1, processor().refundRequestsUnder(processorKey(accepted.jsonPath().getLong("refundId"))));
        assertEquals(600, refundedAtProcessor(order));
    }

    /**
     * Ten refunds of 300 on a charge of 1000: three race to the processor, which holds them, in flight
     * and undecided, while the seven others race in; those are refused before they are sent, since the
     * refunds in flight hold their amounts on the order. Once the processor answers, the three succeed.
     */
    @Test
    void concurrentRefundsOfOneCardPaymentNeverExceedTheCharge() throws Exception {
        long order = Buyer.withBalance(0).paidByCard(1000, "tok_visa");
        processor().failNextRefundOf(order, Fault.HELD, Fault.HELD, Fault.HELD);
        List<Callable<Response>> refunds = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            String refundNo = "r-" + i;
            String key = Api.newKey();
            refunds.add(() -> refundUntilDefinite(order, key, refundNo, 300));
        }

        List<Response> answers = new ArrayList<>();
        ExecutorService background = Executors.newSingleThreadExecutor();
        try {
            Future<List<Response>> heldThree = background.submit(() -> Concurrently.run(refunds.subList(0, 3)));
            Await.until(() -> processor().heldRefundsOf(order) == 3, Duration.ofSeconds(10),
                    "three refunds of order " + order + " held at the processor");
            List<Response> others = Concurrently.run(refunds.subList(3, 10));
            assertFalse(heldThree.isDone(), "set-up: the seven others were answered while three refunds were held at the processor");
            processor().release(order);
            answers.addAll(heldThree.get(RECOVERY_BOUND.toSeconds(), TimeUnit.SECONDS));
            answers.addAll(others);
        } finally {
            background.shutdownNow();
        }

        long refunded = answers.stream().filter(a -> a.statusCode() == 201).count();
        long refused = answers.stream().filter(a -> a.statusCode() == 409 && "REFUND_EXCEEDS_PAYMENT".equals(a.jsonPath().getString("code")))
                .count();
        assertEquals(3, refunded, answers.stream().map(Response::asString).toList().toString());
        assertEquals(7, refused);
        assertEquals(900, refundedAtProcessor(order));
        assertEquals(3, processor().refunds().stream().filter(r -> r.charge().equals(chargeOf(order))).count(),
                "the refused ones never reached the processor");
        assertEquals(900, db.refundedAmount(order));
        assertEquals("PAID", db.orderStatus(order));
    }

    /** A refund waiting for its processor holds its amount: no other refund can take it, and the order is not REFUNDED until it succeeds. */
    @Test
    void aRefundInFlightHoldsItsAmountUntilItsOutcomeIsKnown() {
        long order = Buyer.withBalance(0).paidByCard(1000, "tok_visa");
        processor().failNextRefundOf(order, Fault.TIMEOUT_AFTER_CHARGE);

        Response inFlight = Api.refund(OPS, order, Api.newKey(), "r-1", 800);
        Response rest = Api.refund(OPS, order, Api.newKey(), "r-2", 200);
        Response beyond = Api.refund(OPS, order, Api.newKey(), "r-3", 1);
        Response sameNumber = Api.refund(OPS, order, Api.newKey(), "r-1", 800);

        assertEquals(202, inFlight.statusCode(), inFlight.asString());
        assertEquals(800, inFlight.jsonPath().getLong("refundedTotal"), "the refund in flight is reserved");
        assertEquals(201, rest.statusCode(), rest.asString());
        assertEquals("PAID", rest.jsonPath().getString("orderStatus"), "the whole amount is refunded only once the first succeeds");
        assertEquals(409, beyond.statusCode(), beyond.asString());
        assertEquals(0, beyond.jsonPath().getLong("refundable"));
        assertEquals(409, sameNumber.statusCode(), sameNumber.asString());
        assertEquals("REFUND_PENDING", sameNumber.jsonPath().getString("code"), "another key is told to come back, not given a refund");
        assertNotNull(sameNumber.header("Retry-After"));
        assertEquals("SUCCEEDED", awaitSettled(inFlight.jsonPath().getLong("refundId")).jsonPath().getString("phase"));
        assertEquals("REFUNDED", db.orderStatus(order));
        assertEquals(1000, refundedAtProcessor(order));
    }

    /** The processor refused the refund: a recorded 402, the amount refundable again, the refund number spent, no event. */
    @Test
    void aFailedRefundGivesItsAmountBackAndItsNumberAnswersTheFailure() {
        long order = Buyer.withBalance(0).paidByCard(1000, "tok_norefund_expired");
        String key = Api.newKey();

        Response failed = Api.refund(OPS, order, key, "r-1", 400);
        Response retry = Api.refund(OPS, order, key, "r-1", 400);
        Response sameNumber = Api.refund(OPS, order, Api.newKey(), "r-1", 400);

        assertEquals(402, failed.statusCode(), failed.asString());
        assertEquals("REFUND_FAILED", failed.jsonPath().getString("code"));
        assertEquals("expired_or_canceled_card", failed.jsonPath().getString("failureCode"));
        Replays.assertReplayOf(failed, retry);
        assertEquals(402, sameNumber.statusCode(), sameNumber.asString());
        assertEquals("REFUND_FAILED", sameNumber.jsonPath().getString("code"));
        long refund = failed.jsonPath().getLong("refundId");
        Response details = Api.as(OPS).get("/refunds/" + refund);
        assertEquals(List.of("STARTED", "SENT", "FAILED"), details.jsonPath().getList("history.phase"));
        assertEquals("expired_or_canceled_card", details.jsonPath().getString("failureCode"));
        assertEquals(0, db.refundedAmount(order), "the reservation is given back");
        assertEquals("PAID", db.orderStatus(order));
        assertEquals(0, db.count("SELECT COUNT(*) FROM outbox_event WHERE event_type = 'refund.created' AND ref_id = ?", Long.toString(refund)));
    }

    /** A buyer who never opened an account could never be refunded to a balance: the refund goes to the card (on main: 404 ACCOUNT_NOT_FOUND). */
    @Test
    void aBuyerWithoutAnAccountIsRefundedToTheCard() {
        Buyer buyer = Buyer.withoutAccount();
        long order = buyer.paidByCard(900, "tok_visa");

        Response refunded = Api.refund(OPS, order, Api.newKey(), "r-1", 900);

        assertEquals(201, refunded.statusCode(), refunded.asString());
        assertEquals("REFUNDED", refunded.jsonPath().getString("orderStatus"));
        assertEquals(900, refundedAtProcessor(order));
        assertEquals(0, db.count("SELECT COUNT(*) FROM account WHERE user_id = ?", buyer.userId()), "no account was needed");
    }

    /** A buyer whose account holds another currency than the order's (on main: 409 CURRENCY_MISMATCH, recorded under the key). */
    @Test
    void aBuyerWhoseAccountHoldsAnotherCurrencyIsRefundedToTheCard() {
        Buyer buyer = Buyer.withoutAccount();
        long order = dollarOrder(buyer, 500);
        Response paid = Await.until(() -> Api.payByCard(buyer.bearer(), order, "k-pay-" + order, "tok_visa"), answer -> answer.statusCode() != 202,
                RECOVERY_BOUND, "the card pay of order " + order);
        assertEquals(201, paid.statusCode(), paid.asString());
        Response opened = Api.as(OPS).contentType(ContentType.JSON).body(Map.of("userId", buyer.userId(), "currency", "EUR")).post("/accounts");
        assertEquals(201, opened.statusCode(), opened.asString());

        Response refunded = Api.refund(OPS, order, Api.newKey(), "r-1", 500);

        assertEquals(201, refunded.statusCode(), refunded.asString());
        assertEquals("card", refunded.jsonPath().getString("method"));
        assertEquals("USD", processor().refunds().stream().filter(r -> r.charge().equals(chargeOf(order))).findFirst().orElseThrow()
                .currency(), "back to the card in the order's currency");
        assertEquals(0, db.balance(buyer.userId()));
    }

    @Test
    void aRefundIsShownToOpsAndToNobodyElse() {
        Buyer buyer = Buyer.withBalance(0);
        long order = buyer.paidByCard(250, "tok_visa");
        long refund = Api.refund(OPS, order, Api.newKey(), "r-1", 250).jsonPath().getLong("refundId");

        Response ops = Api.as(OPS).get("/refunds/" + refund);
        Response owner = Api.as(buyer.bearer()).get("/refunds/" + refund);
        Response missing = Api.as(OPS).get("/refunds/" + Long.MAX_VALUE);

        assertEquals(200, ops.statusCode(), ops.asString());
        assertEquals("card", ops.jsonPath().getString("method"));
        assertEquals(250, ops.jsonPath().getLong("amount"));
        assertEquals(403, owner.statusCode(), owner.asString());
        assertEquals(404, missing.statusCode(), missing.asString());
        assertEquals("REFUND_NOT_FOUND", missing.jsonPath().getString("code"));
    }

    /** Settled by the recovery job, with {@code requests} refund requests under the refund's key in all, and one refund. */
    private void assertRefundedOnceUnderItsKey(long refund, long order, long amount, int requests) {
        assertEquals("SUCCEEDED", awaitSettled(refund).jsonPath().getString("phase"));
        String processorKey = processorKey(refund);
        assertEquals(1, processor().refunds().stream().filter(r -> r.key().equals(processorKey)).count());
        assertEquals(requests, processor().refundRequestsUnder(processorKey), "the refund's requests, all under its one key");
        assertEquals(amount, refundedAtProcessor(order));
        assertEquals("REFUNDED", db.orderStatus(order));
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }

    /** Refunds as a patient client: again with the same key while told to retry later or that the outcome is not known yet. */
    private static Response refundUntilDefinite(long order, String key, String refundNo, long amount) {
        return Await.until(() -> Api.refund(OPS, order, key, refundNo, amount),
                answer -> answer.statusCode() != 202 && answer.header("Retry-After") == null, RECOVERY_BOUND,
                "a definite answer to refund " + refundNo + " of order " + order);
    }

    /** Reads the refund until its phase is definite, each UNKNOWN due for the recovery job at once; fails after the recovery bound. */
    private Response awaitSettled(long refund) {
        return Await.until(() -> {
            db.endBackoffOfRefund(refund);
            return Api.as(OPS).get("/refunds/" + refund);
        }, read -> {
            assertEquals(200, read.statusCode(), read.asString());
            return List.of("SUCCEEDED", "FAILED").contains(read.jsonPath().getString("phase"));
        }, RECOVERY_BOUND, "refund " + refund + " SUCCEEDED or FAILED");
    }

    private static String processorKey(long refund) {
        return Api.as(OPS).get("/refunds/" + refund).jsonPath().getString("processorKey");
    }

    private String chargeOf(long order) {
        return db.string("SELECT processor_charge_id FROM pay_record WHERE order_id = ? AND phase = 'SUCCEEDED'", order);
    }

    /** What the processor refunded of the order's charge, in all. */
    private long refundedAtProcessor(long order) {
        String charge = chargeOf(order);
        return processor().refunds().stream().filter(r -> r.charge().equals(charge) && r.succeeded()).mapToLong(ProcessorSimulator.Refund::amount)
                .sum();
    }

    private static long dollarOrder(Buyer buyer, long amount) {
        Response created = Api.as(buyer.bearer()).header("Idempotency-Key", Api.newKey()).contentType(ContentType.JSON)
                .body(Map.of("orderSn", "sn-" + UUID.randomUUID(), "amount", amount, "currency", "USD")).post("/orders");
        assertEquals(201, created.statusCode(), created.asString());
        return created.jsonPath().getLong("id");
    }
}
