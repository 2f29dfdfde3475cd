package io.payonce.webhook;

import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.processor.WebhookSender;
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
import io.payonce.support.Meters;
import io.payonce.support.Webhooks;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URL;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
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
 * The processor's webhooks against the real database and the processor simulator: an event settles
 * a payment whose outcome payonce lost, at once; each event id has one effect however often and
 * however concurrently it arrives; an event that comes late, contradicts what payonce recorded or
 * names a charge payonce never made changes nothing and is kept for ops. The recovery job is
 * paused, so that whatever settles a payment here is a webhook. Concurrent deliveries are made to
 * meet by holding the payment's row until they all wait; payonce's bounds outlast that.
 */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@ExtendWith(LedgerInvariants.class)
@PausedRecoveryJob
class ProcessorWebhookTest {

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    @TestHTTPResource(Webhooks.PATH)
    URL webhooks;

    @AfterEach
    void resumeIt() {
        processor().heal();
    }

    /** The simulator charges, loses its answer (payonce answers 202, UNKNOWN), and some 0.3 to 0.6 s later its event settles the payment. */
    @Test
    void theProcessorsEventSettlesAPaymentWhoseAnswerWasLostAtOnce() {
        processor().webhooks().to(List.of(webhooks.toString()), Webhooks.secret(), new WebhookSender.Faults(0, 600, 0, 0));
        Checkout buyer = Buyer.withBalance(0).checkout(1200);
        processor().failNextChargeOf(buyer.order(), Fault.ERROR_AFTER_CHARGE);

        Response accepted = buyer.payByCard("tok_visa");
        long payment = accepted.jsonPath().getLong("paymentId");
        Response settled = awaitDefinite(buyer, payment);

        assertEquals(202, accepted.statusCode(), accepted.asString());
        assertEquals("SUCCEEDED", settled.jsonPath().getString("phase"), settled.asString());
        assertEquals("PAID", db.orderStatus(buyer.order()));
        assertEquals(List.of("STARTED", "CHARGE_SENT", "UNKNOWN", "SUCCEEDED"), settled.jsonPath().getList("history.phase"));
        String processorKey = settled.jsonPath().getString("processorKey");
        String event = processor().webhooks().eventsAbout(processorKey).get(0);
        assertEquals(event, db.string("SELECT event_id FROM payment_phase WHERE payment_id = ? AND phase = 'SUCCEEDED'", payment),
                "the event's delivery moved the payment, not the paused recovery job");
        assertEquals("APPLIED", db.string("SELECT outcome FROM processor_event WHERE event_id = ?", event));
        assertEquals(1, processor().chargeRequestsUnder(processorKey), "nothing was sent again");
        Response retry = buyer.payByCard("tok_visa");
        assertEquals(201, retry.statusCode(), retry.asString());
        assertEquals("true", retry.header("Idempotent-Replayed"));
    }

    /** The card was declined and the answer lost: charge.failed frees the order for another pay. */
    @Test
    void aChargeFailedEventDeclinesAnUnknownPaymentAndFreesTheOrder() {
        Checkout buyer = Buyer.withBalance(0).checkout(800);
        long payment = unknownPayment(buyer, "tok_decline_webhook");

        Response delivered = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "charge.failed", chargeOf(buyer, payment)));

        assertEquals(200, delivered.statusCode(), delivered.asString());
        assertEquals("APPLIED", delivered.jsonPath().getString("outcome"));
        assertEquals("DECLINED", phaseOf(payment));
        assertEquals("UNPAID", db.orderStatus(buyer.order()));
        Response retry = buyer.payByCard("tok_decline_webhook");
        assertEquals(402, retry.statusCode(), retry.asString());
        assertEquals("CARD_DECLINED", retry.jsonPath().getString("code"));
    }

    @Test
    void aRedeliveryIsAnswered200AndChangesNothing() {
        Checkout buyer = Buyer.withBalance(0).checkout(900);
        long payment = unknownPayment(buyer, "tok_visa");
        String event = Webhooks.event(Webhooks.newEventId(), "charge.succeeded", chargeOf(buyer, payment));

        Response first = Webhooks.deliver(event);
        Response again = Webhooks.deliver(event);

        assertEquals(200, first.statusCode(), first.asString());
        assertEquals("APPLIED", first.jsonPath().getString("outcome"));
        assertNull(first.header("Idempotent-Replayed"));
        assertEquals(200, again.statusCode(), again.asString());
        assertEquals("APPLIED", again.jsonPath().getString("outcome"), "the first delivery's outcome");
        assertEquals("true", again.header("Idempotent-Replayed"));
        assertOneEffect(payment, first.jsonPath().getString("eventId"));
    }

    /**
     * Eight deliveries of one event: one is recorded with its effect, the seven others wait for it and
     * are repeats. The test holds the payment's row, so that the first delivery stops in its
     * transaction with the event claimed, until the seven others, all at once, wait on that claim.
     */
    @Test
    void concurrentDeliveriesOfOneEventHaveOneEffect() throws Exception {
        Checkout buyer = Buyer.withBalance(0).checkout(1100);
        long payment = unknownPayment(buyer, "tok_visa");
        String event = Webhooks.event(Webhooks.newEventId(), "charge.succeeded", chargeOf(buyer, payment));

        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdUntil(db, "pay_record", payment, release);
        ExecutorService background = Executors.newFixedThreadPool(2);
        List<Response> answers = new ArrayList<>();
        try {
            Future<Response> first = background.submit(() -> Webhooks.deliver(event));
            db.awaitWaitingOnRow("pay_record", payment, "SELECT p.id, p.order_id");
            Future<List<Response>> others = background.submit(() -> Concurrently.run(7, () -> Webhooks.deliver(event)));
            assertEquals(7, LockWaits.awaitWaiting(db, "processor_event", null, "INSERT INTO processor_event", 7),
                    "set-up: the seven other deliveries wait on the first one's claim of the event");
            release.complete(null);
            answers.add(first.get(10, TimeUnit.SECONDS));
            answers.addAll(others.get(10, TimeUnit.SECONDS));
        } finally {
            release.complete(null); // when the set-up failed too, not after the holder's 30 s
            background.shutdown();
        }
        rowReleased.get(10, TimeUnit.SECONDS);

        answers.forEach(answer -> assertEquals(200, answer.statusCode(), answer.asString()));
        answers.forEach(answer -> assertEquals("APPLIED", answer.jsonPath().getString("outcome")));
        assertNull(answers.get(0).header("Idempotent-Replayed"), "the delivery that claimed the event first is the one recorded");
        assertEquals(7, answers.stream().filter(answer -> "true".equals(answer.header("Idempotent-Replayed"))).count());
        assertOneEffect(payment, answers.get(0).jsonPath().getString("eventId"));
    }

    /** A charge.failed after the success payonce recorded: nothing changes, and the event is kept, saying so. */
    @Test
    void aLateChargeFailedAfterASuccessChangesNothingAndIsKept() {
        Checkout buyer = Buyer.withBalance(0).checkout(700);
        Response paid = buyer.payByCard("tok_visa");
        long payment = paid.jsonPath().getLong("paymentId");
        JsonObject failed = chargeOf(buyer, payment).put("status", "failed").put("decline_code", "card_declined");
        String eventId = Webhooks.newEventId();

        Response late = Webhooks.deliver(Webhooks.event(eventId, "charge.failed", failed));

        assertEquals(201, paid.statusCode(), paid.asString());
        assertEquals(200, late.statusCode(), late.asString());
        assertEquals("CONTRADICTING", late.jsonPath().getString("outcome"));
        assertEquals("SUCCEEDED", phaseOf(payment));
        assertEquals("PAID", db.orderStatus(buyer.order()));
        assertEquals(List.of("STARTED", "CHARGE_SENT", "SUCCEEDED"), phases(buyer, payment));
        assertEquals(payment, db.count("SELECT payment_id FROM processor_event WHERE event_id = ? AND outcome = 'CONTRADICTING'", eventId),
                "kept for ops, naming the payment");
    }

    /** A success of another amount under the payment's key settles nothing and moves nothing: the payment's own lookup will meet it. */
    @Test
    void aChargeOfAnotherAmountUnderThePaymentsKeyNeverSettlesIt() {
        Checkout buyer = Buyer.withBalance(0).checkout(1300);
        long payment = unknownPayment(buyer, "tok_visa");
        JsonObject otherAmount = chargeOf(buyer, payment).put("amount", 13);

        Response delivered = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "charge.succeeded", otherAmount));

        assertEquals(200, delivered.statusCode(), delivered.asString());
        assertEquals("CONTRADICTING", delivered.jsonPath().getString("outcome"));
        assertEquals("UNKNOWN", phaseOf(payment));
        assertEquals("PAYING", db.orderStatus(buyer.order()));
        assertEquals(0, db.count("SELECT COUNT(*) FROM payment_phase WHERE event_id = ?", delivered.jsonPath().getString("eventId")));
    }

    /**
     * Under a settled payment's key, its own charge again is a repeat, ALREADY_SETTLED; another charge,
     * even of its very amount and order, is a second charge of the card (the processor forgot the key
     * and took a resend as new): CONTRADICTING, which the alert counts, never filed as a quiet repeat.
     */
    @Test
    void aSecondChargeUnderASettledPaymentsKeyIsAContradictionNotARepeat() {
        Checkout buyer = Buyer.withBalance(0).checkout(1400);
        Response paid = buyer.payByCard("tok_visa");
        assertEquals(201, paid.statusCode(), paid.asString());
        long payment = paid.jsonPath().getLong("paymentId");

        Response again = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "charge.succeeded", chargeOf(buyer, payment)));
        Response second = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "charge.succeeded",
                chargeOf(buyer, payment).put("id", "ch_second_" + payment)));

        assertEquals(200, again.statusCode(), again.asString());
        assertEquals("ALREADY_SETTLED", again.jsonPath().getString("outcome"));
        assertEquals(200, second.statusCode(), second.asString());
        assertEquals("CONTRADICTING", second.jsonPath().getString("outcome"));
        assertEquals("SUCCEEDED", phaseOf(payment));
        assertEquals("PAID", db.orderStatus(buyer.order()));
    }

    /** Under a declined payment's key, its own decline again is a repeat; a decline naming another charge is a contradiction. */
    @Test
    void aSecondDeclineUnderADeclinedPaymentsKeyIsAContradictionNotARepeat() {
        Checkout buyer = Buyer.withBalance(0).checkout(1450);
        Response declined = buyer.payByCard("tok_decline_generic");
        assertEquals(402, declined.statusCode(), declined.asString());
        long payment = declined.jsonPath().getLong("paymentId");
        assertNotNull(db.chargeIdOfPayment(payment), "set-up: the decline named its charge");

        Response again = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "charge.failed", chargeOf(buyer, payment)));
        Response second = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "charge.failed",
                chargeOf(buyer, payment).put("id", "ch_second_" + payment)));

        assertEquals("ALREADY_SETTLED", again.jsonPath().getString("outcome"), again.asString());
        assertEquals("CONTRADICTING", second.jsonPath().getString("outcome"), second.asString());
        assertEquals("DECLINED", phaseOf(payment));
    }

    /** A decline of another amount, currency or order under the payment's key frees nothing: the order stays the payment's. */
    @Test
    void aDeclineOfAnotherChargeUnderThePaymentsKeyNeverFreesTheOrder() {
        Checkout buyer = Buyer.withBalance(0).checkout(1300);
        long payment = unknownPayment(buyer, "tok_visa");

        for (JsonObject other : List.of(chargeOf(buyer, payment).put("amount", 13), chargeOf(buyer, payment).put("currency", "usd"),
                chargeOf(buyer, payment).put("reference", "order-0"))) {
            JsonObject declined = other.put("status", "failed").put("decline_code", "card_declined");
            Response delivered = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "charge.failed", declined));

            assertEquals(200, delivered.statusCode(), delivered.asString());
            assertEquals("CONTRADICTING", delivered.jsonPath().getString("outcome"), declined.encode());
            assertEquals("UNKNOWN", phaseOf(payment));
            assertEquals("PAYING", db.orderStatus(buyer.order()));
        }
    }

    /**
     * An event under an UNKNOWN payment's key that names, with the payment's own amount and order, a
     * charge another payment recorded already: not this payment's. Answered 200 and kept as
     * CONTRADICTING, never a 500 the processor would deliver again for days; nothing moves.
     */
    @Test
    void anEventNamingAChargeAnotherPaymentRecordedIsKeptAsAContradiction() {
        Checkout paid = Buyer.withBalance(0).checkout(1500);
        Response first = paid.payByCard("tok_visa");
        assertEquals(201, first.statusCode(), first.asString());
        long paidPayment = first.jsonPath().getLong("paymentId");
        String recorded = db.chargeIdOfPayment(paidPayment);
        Checkout buyer = Buyer.withBalance(0).checkout(1500);
        long payment = unknownPayment(buyer, "tok_visa");

        for (String type : List.of("charge.succeeded", "charge.failed")) {
            JsonObject named = chargeOf(buyer, payment).put("id", recorded);
            JsonObject object = type.equals("charge.failed") ? named.put("status", "failed").put("decline_code", "card_declined") : named;
            String eventId = Webhooks.newEventId();
            Response delivered = Webhooks.deliver(Webhooks.event(eventId, type, object));

            assertEquals(200, delivered.statusCode(), delivered.asString());
            assertEquals("CONTRADICTING", delivered.jsonPath().getString("outcome"), type);
            assertEquals(payment, db.count("SELECT payment_id FROM processor_event WHERE event_id = ? AND outcome = 'CONTRADICTING'", eventId),
                    "kept for ops, naming the payment");
            assertEquals(0, db.count("SELECT COUNT(*) FROM payment_phase WHERE event_id = ?", eventId));
        }
        assertEquals("UNKNOWN", phaseOf(payment));
        assertEquals("PAYING", db.orderStatus(buyer.order()));
        assertEquals(List.of("STARTED", "CHARGE_SENT", "UNKNOWN"), phases(buyer, payment));
        assertEquals(recorded, db.string("SELECT processor_charge_id FROM pay_record WHERE id = ? AND phase = 'SUCCEEDED'", paidPayment));
    }

    @Test
    void anEventForAChargePayonceNeverMadeIsRecordedCountedAndCreatesNothing() {
        double before = meters.count(WebhookMeter.NAME, "outcome", "unknown_charge");
        String key = "po_" + Webhooks.newEventId();
        JsonObject stranger = new JsonObject().put("id", "ch_stranger").put("object", "charge").put("amount", 5000).put("currency", "eur")
                .put("status", "succeeded").put("reference", "order-1").put("idempotency_key", key);
        String eventId = Webhooks.newEventId();
        long payments = db.count("SELECT COUNT(*) FROM pay_record");
        long orders = db.count("SELECT COUNT(*) FROM orders");

        Response delivered = Webhooks.deliver(Webhooks.event(eventId, "charge.succeeded", stranger));

        assertEquals(200, delivered.statusCode(), delivered.asString());
        assertEquals("UNKNOWN_CHARGE", delivered.jsonPath().getString("outcome"));
        assertEquals(before + 1, meters.count(WebhookMeter.NAME, "outcome", "unknown_charge"));
        assertEquals(key, db.string("SELECT processor_key FROM processor_event WHERE event_id = ? AND outcome = 'UNKNOWN_CHARGE'", eventId));
        assertEquals(payments, db.count("SELECT COUNT(*) FROM pay_record"), "no payment is created");
        assertEquals(orders, db.count("SELECT COUNT(*) FROM orders"));
    }

    /**
     * charge.refunded names the charge, not which of its refunds: kept, not applied (each refund is
     * settled by its own refund event, RefundWebhookTest); a type payonce does not read is kept and ignored.
     */
    @Test
    void chargeRefundedIsKeptNotAppliedAndOtherTypesIgnored() {
        Checkout buyer = Buyer.withBalance(0).checkout(500);
        long payment = unknownPayment(buyer, "tok_visa");
        JsonObject refunded = chargeOf(buyer, payment).put("refunded", true).put("amount_refunded", 500);

        Response delivered = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "charge.refunded", refunded));
        Response other = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "customer.created", new JsonObject().put("id", "cus_1")));

        assertEquals(200, delivered.statusCode(), delivered.asString());
        assertEquals("NOT_APPLIED", delivered.jsonPath().getString("outcome"));
        assertEquals("UNKNOWN", phaseOf(payment), "a charge's refund settles no payment");
        assertEquals("IGNORED_TYPE", other.jsonPath().getString("outcome"), other.asString());
    }

    /** A delivery that is not the processor's, or not now: 400, and the event it carries is not recorded and changes nothing. */
    @Test
    void aForgedStaleOrMissingSignatureIsRefusedAndNothingIsWritten() {
        Checkout buyer = Buyer.withBalance(0).checkout(600);
        long payment = unknownPayment(buyer, "tok_visa");
        String eventId = Webhooks.newEventId();
        String event = Webhooks.event(eventId, "charge.succeeded", chargeOf(buyer, payment));
        long now = System.currentTimeMillis() / 1000;
        double refusedBefore = meters.count(WebhookMeter.NAME, "outcome", "refused");

        List<Response> refused = List.of(
                Webhooks.deliver(event, WebhookSender.signature("whsec_someone_elses_secret", now, event)),
                Webhooks.deliver(event, WebhookSender.signature(Webhooks.secret(), now - 600, event)),
                Webhooks.deliver(event, WebhookSender.signature(Webhooks.secret(), now + 600, event)),
                Webhooks.deliver(event, WebhookSender.signature(Webhooks.secret(), now, event.replace("1", "2"))),
                Webhooks.deliver(event, "t=" + now),
                Webhooks.deliver(event, "garbage"),
                RestAssured.given().contentType("application/json").body(event).post(Webhooks.PATH));

        refused.forEach(answer -> {
            assertEquals(400, answer.statusCode(), answer.asString());
            assertEquals("WEBHOOK_SIGNATURE_INVALID", answer.jsonPath().getString("code"), answer.asString());
        });
        assertEquals(0, Webhooks.recorded(db, eventId), "nothing recorded");
        assertEquals("UNKNOWN", phaseOf(payment), "nothing settled");
        assertEquals(refusedBefore + refused.size(), meters.count(WebhookMeter.NAME, "outcome", "refused"));
    }

    /** While the processor rolls its secret over it signs with both: a header whose second v1 matches is the processor's. */
    @Test
    void aSignatureAmongSeveralIsEnough() {
        String event = Webhooks.event(Webhooks.newEventId(), "customer.created", new JsonObject().put("id", "cus_2"));
        long now = System.currentTimeMillis() / 1000;
        String old = WebhookSender.signature("whsec_the_secret_being_replaced", now, event);
        String current = WebhookSender.signature(Webhooks.secret(), now, event);

        Response delivered = Webhooks.deliver(event, old + "," + current.substring(current.indexOf("v1=")));

        assertEquals(200, delivered.statusCode(), delivered.asString());
    }

    /**
     * The simulator as the chaos run drives it: every event sent twice, each copy 0.3 to 0.6 s late and
     * so out of order, beside a forged and a stale copy of each; every answer lost. Each payment is
     * settled by its event, once; no forged or stale copy is recorded.
     */
    @Test
    void theSimulatorsEventsSettleEachPaymentOnceThroughDuplicatesDelaysAndForgeries() {
        processor().webhooks().to(List.of(webhooks.toString()), Webhooks.secret(), new WebhookSender.Faults(1, 600, 1, 1));
        List<Checkout> buyers = List.of(Buyer.withBalance(0).checkout(101), Buyer.withBalance(0).checkout(102),
                Buyer.withBalance(0).checkout(103), Buyer.withBalance(0).checkout(104));
        for (Checkout buyer : buyers) {
            processor().failNextChargeOf(buyer.order(), Fault.RESET_AFTER_CHARGE);
            assertEquals(202, buyer.payByCard(buyer.order() % 2 == 0 ? "tok_visa" : "tok_decline_sim").statusCode());
        }

        for (Checkout buyer : buyers) {
            long payment = db.count("SELECT id FROM pay_record WHERE order_id = ?", buyer.order());
            Response settled = awaitDefinite(buyer, payment);
            String key = settled.jsonPath().getString("processorKey");
            String event = processor().webhooks().eventsAbout(key).get(0);
            assertEquals(buyer.order() % 2 == 0 ? "SUCCEEDED" : "DECLINED", settled.jsonPath().getString("phase"));
            assertEquals(1, db.count("SELECT COUNT(*) FROM payment_phase WHERE event_id = ?", event), "one effect of " + event);
            Await.until(() -> deliveriesOf(event + "_forged") + deliveriesOf(event + "_stale") == 2, Duration.ofSeconds(5),
                    "the forged and stale copies of " + event + " answered");
            assertEquals(0, Webhooks.recorded(db, event + "_forged") + Webhooks.recorded(db, event + "_stale"));
        }
        assertTrue(processor().webhooks().deliveries().stream().filter(delivery -> delivery.kind() == WebhookSender.Kind.FORGED
                || delivery.kind() == WebhookSender.Kind.STALE).allMatch(delivery -> delivery.status() == 400), "every forgery refused with 400");
    }

    private long deliveriesOf(String eventId) {
        return processor().webhooks().deliveries().stream().filter(delivery -> delivery.eventId().equals(eventId)).count();
    }

    /** One inbox row, one phase moved by the event, one payment.succeeded event, one order paid. */
    private void assertOneEffect(long payment, String eventId) {
        assertEquals(1, Webhooks.recorded(db, eventId));
        assertEquals(1, db.count("SELECT COUNT(*) FROM payment_phase WHERE event_id = ?", eventId));
        assertEquals(1, db.count("SELECT COUNT(*) FROM payment_phase WHERE payment_id = ? AND phase = 'SUCCEEDED'", payment));
        assertEquals(1, db.count("SELECT COUNT(*) FROM outbox_event WHERE event_type = 'payment.succeeded' AND ref_id = ?",
                Long.toString(payment)));
        assertEquals("SUCCEEDED", phaseOf(payment));
    }

    /** A card pay whose charge the processor made (or declined) and whose answer it lost: 202, and the payment UNKNOWN. */
    private long unknownPayment(Checkout buyer, String cardToken) {
        processor().failNextChargeOf(buyer.order(), Fault.ERROR_AFTER_CHARGE);
        Response accepted = buyer.payByCard(cardToken);
        assertEquals(202, accepted.statusCode(), accepted.asString());
        long payment = accepted.jsonPath().getLong("paymentId");
        assertEquals("UNKNOWN", phaseOf(payment));
        return payment;
    }

    /** The processor's charge of the payment, as its events carry it. */
    private JsonObject chargeOf(Checkout buyer, long payment) {
        String key = Api.as(buyer.bearer()).get("/payments/" + payment).jsonPath().getString("processorKey");
        return processor().chargeUnder(key).json();
    }

    private String phaseOf(long payment) {
        return db.paymentPhase(payment);
    }

    private static List<String> phases(Checkout buyer, long payment) {
        return Api.as(buyer.bearer()).get("/payments/" + payment).jsonPath().getList("history.phase");
    }

    private static Response awaitDefinite(Checkout buyer, long payment) {
        return Await.until(() -> Api.as(buyer.bearer()).get("/payments/" + payment),
                read -> List.of("SUCCEEDED", "DECLINED").contains(read.jsonPath().getString("phase")), Duration.ofSeconds(10),
                "payment " + payment + " settled by its event");
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
