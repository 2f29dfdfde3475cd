package io.payonce.payment.card;

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
import io.payonce.support.PausedRecoveryJob;
import io.payonce.support.Tokens;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.time.Duration;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What only a card payment's settlement by ops has, against the processor simulator: the proof that
 * nothing was charged, which is the processor's list of the order's charges, since the payment's key
 * proves nothing once the processor has forgotten it, and the payment shown to its owner. The payment's
 * answer is lost (202, UNKNOWN), and its first send is moved back beyond resend-within, as an hour of
 * the recovery job finding nothing under its key would leave it. The rest of an operator's settlement
 * is the lifecycle's, proven for every kind ({@code OperatorSettlementsTest}). The recovery job is
 * paused so that nothing but the test moves the payment.
 */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@WithTestResource(value = ProcessorSimulatorResource.class, scope = TestResourceScope.GLOBAL)
@ExtendWith(LedgerInvariants.class)
@PausedRecoveryJob
class NotChargedTest {

    private final Database db = Database.forTests();

    @AfterEach
    void healAndResume() {
        processor().heal();
        processor().up();
    }

    /** A payment payonce lost the answer of; {@code processorKey} is its charge's key at the processor. */
    record Overdue(Checkout buyer, long payment, String processorKey) {
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

    /** Staff and their words are not the owner's business; a refund has no such reader, being ops' to read alone. */
    @Test
    void itsOwnerReadsThePaymentWithoutItsSettlement() {
        Overdue overdue = overdue(1100, Fault.ERROR_BEFORE_CHARGE);
        assertEquals(201, settle(Tokens.ops(), overdue.payment(), Api.newKey(), notCharged()).statusCode());

        Response forOwner = Api.as(overdue.buyer().bearer()).get("/payments/" + overdue.payment());

        assertEquals(200, forOwner.statusCode(), forOwner.asString());
        assertNull(forOwner.jsonPath().get("settlement"), "staff and their words are not the owner's business");
        assertEquals("DECLINED", forOwner.jsonPath().getString("phase"));
    }

    /**
     * A card pay whose answer the processor's {@code fault} lost (202, UNKNOWN, the order PAYING), its
     * first send then moved back two hours: past resend-within (1 h) and any lease.
     */
    private Overdue overdue(long amount, Fault fault) {
        Checkout buyer = Buyer.withBalance(0).checkout(amount);
        processor().failNextChargeOf(buyer.order(), fault);
        Response accepted = buyer.payByCard("tok_visa");
        assertEquals(202, accepted.statusCode(), accepted.asString());
        long payment = accepted.jsonPath().getLong("paymentId");
        db.update("UPDATE pay_record SET first_sent_at = first_sent_at - INTERVAL 2 HOUR WHERE id = ?", payment);
        return new Overdue(buyer, payment, db.processorKeyOfPayment(payment));
    }

    private static Response settle(String bearer, long payment, String key, Map<String, String> body) {
        return Api.as(bearer).header("Idempotency-Key", key).contentType(ContentType.JSON).body(body).post("/payments/" + payment + "/settlement");
    }

    private static Map<String, String> notCharged() {
        return Map.of("outcome", "not_charged", "reason", "the processor's dashboard shows nothing for this order");
    }

    private String phase(Overdue overdue) {
        return db.paymentPhase(overdue.payment());
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
