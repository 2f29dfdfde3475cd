package io.payonce.webhook;

import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.processor.WebhookSender;
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
import io.payonce.support.Meters;
import io.payonce.support.Tokens;
import io.payonce.support.Webhooks;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
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
 * The processor's refund events against the real database and the processor simulator: an event
 * settles a refund to the card whose outcome payonce lost, at once, as a lookup would (a failed
 * refund gives its amount back to the order; a succeeded one writes its event); each event id has one
 * effect however often and however concurrently it arrives; an event that comes late, contradicts
 * what payonce recorded, names another refund or one payonce never made changes nothing and is kept
 * for ops. The refund recovery job is paused, so that whatever settles a refund here is a webhook.
 * Concurrent deliveries are made to meet by holding the refund's order until they all wait;
 * payonce's bounds outlast that.
 */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@ExtendWith(LedgerInvariants.class)
@PausedRecoveryJob
class RefundWebhookTest {

    private static final String OPS = Tokens.ops();

    /** How payonce's statement that takes an order's lock begins ({@code OrderRepository}): a refund event takes its order's first. */
    private static final String ORDER_LOCK = "SELECT o.id, o.order_sn";

    private final Database db = Database.forTests();

    /** Whether this application's processor client has made its first refund, which loads and connects it. */
    private static boolean warm;

    @Inject
    Meters meters;

    @TestHTTPResource(Webhooks.PATH)
    URL webhooks;

    /** A refund to the card first, while the recovery job still runs: a cold client's first call can outlast a short processor timeout. */
    @BeforeEach
    void warmTheClient() {
        if (!warm) {
            long order = Buyer.withBalance(0).paidByCard(100, "tok_visa");
            String key = Api.newKey();
            Response refunded = Await.until(() -> Api.refund(OPS, order, key, "warm-up", 100), answer -> answer.statusCode() != 202,
                    Duration.ofSeconds(20), "the warm-up refund settled");
            assertEquals(201, refunded.statusCode(), refunded.asString());
            warm = true;
        }
    }

    @AfterEach
    void resumeIt() {
        processor().heal();
    }

    /** The simulator refunds the card, loses its answer (payonce answers 202, UNKNOWN), and 0.3 to 0.6 s later its event settles the refund. */
    @Test
    void theProcessorsEventSettlesARefundWhoseAnswerWasLostAtOnce() {
        processor().webhooks().to(List.of(webhooks.toString()), Webhooks.secret(), new WebhookSender.Faults(0, 600, 0, 0));
        long order = Buyer.withBalance(0).paidByCard(1000, "tok_visa");
        String key = Api.newKey();
        processor().failNextRefundOf(order, Fault.ERROR_AFTER_CHARGE);

        Response accepted = Api.refund(OPS, order, key, "r-1", 1000);
        long refund = accepted.jsonPath().getLong("refundId");
        Response settled = awaitSettled(refund);

        assertEquals(202, accepted.statusCode(), accepted.asString());
        assertEquals("SUCCEEDED", settled.jsonPath().getString("phase"), settled.asString());
        assertEquals(List.of("STARTED", "SENT", "UNKNOWN", "SUCCEEDED"), settled.jsonPath().getList("history.phase"));
        String processorKey = settled.jsonPath().getString("processorKey");
        String event = processor().webhooks().eventsAbout(processorKey).get(0);
        assertEquals(event, db.string("SELECT event_id FROM refund_phase WHERE refund_id = ? AND phase = 'SUCCEEDED'", refund),
                "the event's delivery moved the refund, not the paused recovery job");
        assertEquals(refund, db.count("SELECT refund_id FROM processor_event WHERE event_id = ? AND outcome = 'APPLIED'", event));
        assertEquals(1, refundEvents(refund), "its refund.created event");
        assertEquals("REFUNDED", db.orderStatus(order), "refunded in full once its one refund succeeded");
        assertEquals(1, processor().refundRequestsUnder(processorKey), "nothing was sent again");
        Response retry = Api.refund(OPS, order, key, "r-1", 1000);
        assertEquals(201, retry.statusCode(), retry.asString());
        assertEquals("true", retry.header("Idempotent-Replayed"), "the key's answer was settled as a lookup settles it");
        assertEquals("SUCCEEDED", retry.jsonPath().getString("phase"));
    }

    /**
     * The processor answered 500 and its event later says the refund failed: the refund is FAILED,
     * its key answers the 402, and the amount it held is refundable again, so a new refund of the
     * whole amount goes through.
     */
    @Test
    void aRefundFailedEventFailsAnUnknownRefundAndGivesItsAmountBack() {
        long order = Buyer.withBalance(0).paidByCard(1000, "tok_visa");
        String key = Api.newKey();
        processor().failNextRefundOf(order, Fault.ERROR_BEFORE_CHARGE);
        Response accepted = Api.refund(OPS, order, key, "r-1", 1000);
        long refund = accepted.jsonPath().getLong("refundId");
        assertEquals(202, accepted.statusCode(), accepted.asString());
        assertEquals(1000, db.refundedAmount(order), "held while the refund is unknown");
        JsonObject failed = refundObject(refund).put("status", "failed").put("failure_code", "processing_error");

        Response delivered = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "refund.failed", failed));

        assertEquals(200, delivered.statusCode(), delivered.asString());
        assertEquals("APPLIED", delivered.jsonPath().getString("outcome"));
        assertEquals("FAILED", phaseOf(refund));
        assertEquals(List.of("STARTED", "SENT", "UNKNOWN", "FAILED"), history(refund));
        assertEquals(1, db.count("SELECT COUNT(*) FROM refund_phase WHERE refund_id = ? AND phase = 'FAILED' AND event_id = ?", refund,
                delivered.jsonPath().getString("eventId")));
        assertEquals(0, db.refundedAmount(order), "the reservation is given back");
        assertEquals(0, refundEvents(refund), "a failed refund has no refund.created event");
        Response retry = Api.refund(OPS, order, key, "r-1", 1000);
        assertEquals(402, retry.statusCode(), retry.asString());
        assertEquals("REFUND_FAILED", retry.jsonPath().getString("code"));
        assertEquals("processing_error", retry.jsonPath().getString("failureCode"));
        assertEquals("true", retry.header("Idempotent-Replayed"));
        Response again = Api.refund(OPS, order, Api.newKey(), "r-2", 1000);
        assertEquals(201, again.statusCode(), again.asString());
        assertEquals("REFUNDED", db.orderStatus(order));
    }

    @Test
    void aRedeliveryIsAnswered200AndChangesNothing() {
        long refund = unknownRefund(900);
        String event = Webhooks.event(Webhooks.newEventId(), "refund.succeeded", refundObject(refund));

        Response first = Webhooks.deliver(event);
        Response again = Webhooks.deliver(event);

        assertEquals(200, first.statusCode(), first.asString());
        assertEquals("APPLIED", first.jsonPath().getString("outcome"));
        assertEquals(200, again.statusCode(), again.asString());
        assertEquals("APPLIED", again.jsonPath().getString("outcome"), "the first delivery's outcome");
        assertEquals("true", again.header("Idempotent-Replayed"));
        assertOneEffect(refund, first.jsonPath().getString("eventId"));
    }

    /**
     * Eight deliveries of one event: one is recorded with its effect, the seven others wait for it and
     * are repeats. The test holds the refund's order, so that the first delivery stops in its
     * transaction with the event claimed, until the seven others, all at once, wait on that claim.
     */
    @Test
    void concurrentDeliveriesOfOneEventHaveOneEffect() throws Exception {
        long refund = unknownRefund(1100);
        long order = orderOf(refund);
        String event = Webhooks.event(Webhooks.newEventId(), "refund.succeeded", refundObject(refund));

        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdUntil(db, "orders", order, release);
        ExecutorService background = Executors.newFixedThreadPool(2);
        List<Response> answers = new ArrayList<>();
        try {
            Future<Response> first = background.submit(() -> Webhooks.deliver(event));
            db.awaitWaitingOnRow("orders", order, ORDER_LOCK);
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
        assertOneEffect(refund, answers.get(0).jsonPath().getString("eventId"));
    }

    /**
     * Six events of one refund, each under its own id (a processor that sends the same news twice), at
     * the same moment: each is judged under the order's and the refund's locks, so one settles the
     * refund and the others find it settled alike. The test holds the order until all six, each having
     * found the refund unsettled, wait for its lock.
     */
    @Test
    void concurrentEventsAboutOneRefundSettleItOnce() throws Exception {
        long refund = unknownRefund(1200);
        long order = orderOf(refund);
        JsonObject refunded = refundObject(refund);

        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdUntil(db, "orders", order, release);
        ExecutorService background = Executors.newSingleThreadExecutor();
        List<Response> answers;
        try {
            Future<List<Response>> events = background.submit(() -> Concurrently.run(6,
                    () -> Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "refund.succeeded", refunded))));
            assertEquals(6, LockWaits.awaitWaiting(db, "orders", order, ORDER_LOCK, 6),
                    "set-up: the six events found the refund unsettled and wait for its order together");
            release.complete(null);
            answers = events.get(10, TimeUnit.SECONDS);
        } finally {
            release.complete(null); // when the set-up failed too, not after the holder's 30 s
            background.shutdown();
        }
        rowReleased.get(10, TimeUnit.SECONDS);

        answers.forEach(answer -> assertEquals(200, answer.statusCode(), answer.asString()));
        assertEquals(1, answers.stream().filter(answer -> "APPLIED".equals(answer.jsonPath().getString("outcome"))).count());
        assertEquals(5, answers.stream().filter(answer -> "ALREADY_SETTLED".equals(answer.jsonPath().getString("outcome"))).count());
        assertEquals(1, db.count("SELECT COUNT(*) FROM refund_phase WHERE refund_id = ? AND phase = 'SUCCEEDED'", refund));
        assertEquals(1, refundEvents(refund));
    }

    /**
     * Two events of one refund, told apart by their ids, both arriving: the first settles it, the
     * second finds it settled alike (ALREADY_SETTLED), and a late refund.failed after the success
     * changes nothing and is kept, naming the refund (CONTRADICTING).
     */
    @Test
    void aLateRefundFailedAfterASuccessChangesNothingAndIsKept() {
        long order = Buyer.withBalance(0).paidByCard(700, "tok_visa");
        Response refunded = Api.refund(OPS, order, Api.newKey(), "r-1", 300);
        assertEquals(201, refunded.statusCode(), refunded.asString());
        long refund = refunded.jsonPath().getLong("refundId");
        String lateId = Webhooks.newEventId();

        Response same = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "refund.succeeded", refundObject(refund)));
        Response late = Webhooks.deliver(Webhooks.event(lateId, "refund.failed",
                refundObject(refund).put("status", "failed").put("failure_code", "expired_or_canceled_card")));

        assertEquals("ALREADY_SETTLED", same.jsonPath().getString("outcome"), same.asString());
        assertEquals(200, late.statusCode(), late.asString());
        assertEquals("CONTRADICTING", late.jsonPath().getString("outcome"));
        assertEquals("SUCCEEDED", phaseOf(refund));
        assertEquals(List.of("STARTED", "SENT", "SUCCEEDED"), history(refund));
        assertEquals(300, db.refundedAmount(order), "the refund still holds its amount");
        assertEquals(1, refundEvents(refund));
        assertEquals(refund, db.count("SELECT refund_id FROM processor_event WHERE event_id = ? AND outcome = 'CONTRADICTING'", lateId),
                "kept for ops, naming the refund");
    }

    /**
     * A succeeded or failed refund under the refund's key but of another amount, currency or charge is
     * not this refund: nothing settles or moves, the amount stays held (a failure of another refund
     * must not free it for a second refund of the card), and the refund's own lookup will meet it.
     */
    @Test
    void aRefundOfAnotherAmountCurrencyOrChargeUnderTheKeyNeverSettlesIt() {
        long refund = unknownRefund(1300);
        List<JsonObject> others = List.of(refundObject(refund).put("amount", 13), refundObject(refund).put("currency", "usd"),
                refundObject(refund).put("charge", "ch_another"));

        for (JsonObject other : others) {
            for (String type : List.of("refund.succeeded", "refund.failed")) {
                JsonObject object = type.equals("refund.failed") ? other.copy().put("status", "failed") : other;
                Response delivered = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), type, object));

                assertEquals(200, delivered.statusCode(), delivered.asString());
                assertEquals("CONTRADICTING", delivered.jsonPath().getString("outcome"), type + " " + object.encode());
                assertEquals(0, db.count("SELECT COUNT(*) FROM refund_phase WHERE event_id = ?", delivered.jsonPath().getString("eventId")));
            }
        }
        assertEquals("UNKNOWN", phaseOf(refund));
        assertEquals(0, refundEvents(refund));
        assertEquals(1300, db.count("SELECT o.refunded_amount FROM orders o JOIN refund_record r ON r.order_id = o.id WHERE r.id = ?", refund));
    }

    /**
     * A second processor refund under the key of a refund already recorded, of the same amount and
     * charge: the processor forgot the key and took a resend for a new refund, and the card was
     * refunded twice. Only the processor's events can show it: kept as CONTRADICTING for ops, never
     * a quiet repeat.
     */
    @Test
    void aSecondProcessorRefundUnderTheKeyIsKeptForOpsAsAContradiction() {
        long refund = unknownRefund(1400);
        Response first = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "refund.succeeded", refundObject(refund)));
        assertEquals("APPLIED", first.jsonPath().getString("outcome"), first.asString());

        Response second = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "refund.succeeded",
                refundObject(refund).put("id", "re_second_" + refund)));

        assertEquals("CONTRADICTING", second.jsonPath().getString("outcome"), second.asString());
        assertEquals("SUCCEEDED", phaseOf(refund));
        assertEquals(1, refundEvents(refund));
    }

    /**
     * An event under an UNKNOWN refund's key that names, with the refund's own charge and amount, a
     * processor refund another refund recorded already (a processor's bug, or two of its ids alike
     * once kept): not this refund's. Answered 200 and kept as CONTRADICTING, never a 500 the
     * processor would deliver again for days; nothing moves, and the other refund keeps its own.
     */
    @Test
    void anEventNamingAProcessorRefundAnotherRefundRecordedIsKeptAsAContradiction() {
        long settledOrder = Buyer.withBalance(0).paidByCard(1500, "tok_visa");
        Response settled = Api.refund(OPS, settledOrder, Api.newKey(), "r-1", 1500);
        assertEquals(201, settled.statusCode(), settled.asString());
        long settledRefund = settled.jsonPath().getLong("refundId");
        String recorded = db.processorRefundIdOf(settledRefund);
        long refund = unknownRefund(1500);

        for (String type : List.of("refund.succeeded", "refund.failed")) {
            JsonObject named = refundObject(refund).put("id", recorded);
            JsonObject object = type.equals("refund.failed") ? named.put("status", "failed").put("failure_code", "processing_error") : named;
            String eventId = Webhooks.newEventId();
            Response delivered = Webhooks.deliver(Webhooks.event(eventId, type, object));

            assertEquals(200, delivered.statusCode(), delivered.asString());
            assertEquals("CONTRADICTING", delivered.jsonPath().getString("outcome"), type);
            assertEquals(refund, db.count("SELECT refund_id FROM processor_event WHERE event_id = ? AND outcome = 'CONTRADICTING'", eventId),
                    "kept for ops, naming the refund");
            assertEquals(0, db.count("SELECT COUNT(*) FROM refund_phase WHERE event_id = ?", eventId));
        }
        assertEquals("UNKNOWN", phaseOf(refund));
        assertEquals(List.of("STARTED", "SENT", "UNKNOWN"), history(refund));
        assertEquals(0, refundEvents(refund));
        assertEquals(1500, db.count("SELECT o.refunded_amount FROM orders o JOIN refund_record r ON r.order_id = o.id WHERE r.id = ?", refund),
                "still reserved");
        assertEquals("SUCCEEDED", phaseOf(settledRefund));
        assertEquals(recorded, db.processorRefundIdOf(settledRefund));
    }

    /** Under a key no refund of payonce's was made, or under none: recorded, counted, and nothing is created or moved. */
    @Test
    void anEventForARefundPayonceNeverMadeIsRecordedCountedAndCreatesNothing() {
        double before = meters.count(WebhookMeter.NAME, "outcome", "unknown_refund");
        String key = "po_" + Webhooks.newEventId();
        JsonObject stranger = new JsonObject().put("id", "re_stranger").put("object", "refund").put("charge", "ch_stranger")
                .put("amount", 5000).put("currency", "eur").put("status", "succeeded").put("idempotency_key", key);
        JsonObject keyless = stranger.copy().put("idempotency_key", (String) null);
        String eventId = Webhooks.newEventId();
        long refunds = db.count("SELECT COUNT(*) FROM refund_record");
        long refundedInAll = db.count("SELECT COALESCE(SUM(refunded_amount), 0) FROM orders");

        Response delivered = Webhooks.deliver(Webhooks.event(eventId, "refund.succeeded", stranger));
        Response unnamed = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "refund.failed", keyless.put("status", "failed")));

        assertEquals(200, delivered.statusCode(), delivered.asString());
        assertEquals("UNKNOWN_REFUND", delivered.jsonPath().getString("outcome"));
        assertEquals("UNKNOWN_REFUND", unnamed.jsonPath().getString("outcome"), unnamed.asString());
        assertEquals(before + 2, meters.count(WebhookMeter.NAME, "outcome", "unknown_refund"));
        assertEquals(key, db.string("SELECT processor_key FROM processor_event WHERE event_id = ? AND outcome = 'UNKNOWN_REFUND' "
                + "AND refund_id IS NULL AND payment_id IS NULL", eventId));
        assertEquals(refunds, db.count("SELECT COUNT(*) FROM refund_record"), "no refund is created");
        assertEquals(refundedInAll, db.count("SELECT COALESCE(SUM(refunded_amount), 0) FROM orders"), "no order's refunds move");
    }

    /** A refund event is the processor's only if signed by it, now; and a refund.succeeded whose refund failed is no outcome. */
    @Test
    void aForgedStaleOrMalformedRefundEventIsRefusedAndNothingIsWritten() {
        long refund = unknownRefund(600);
        String eventId = Webhooks.newEventId();
        String event = Webhooks.event(eventId, "refund.succeeded", refundObject(refund));
        String contradictory = Webhooks.event(eventId, "refund.succeeded", refundObject(refund).put("status", "failed"));
        long now = System.currentTimeMillis() / 1000;

        List<Response> forged = List.of(
                Webhooks.deliver(event, WebhookSender.signature("whsec_someone_elses_secret", now, event)),
                Webhooks.deliver(event, WebhookSender.signature(Webhooks.secret(), now - 600, event)),
                Webhooks.deliver(event, WebhookSender.signature(Webhooks.secret(), now, event.replace("600", "601"))));
        Response malformed = Webhooks.deliver(contradictory);

        forged.forEach(answer -> {
            assertEquals(400, answer.statusCode(), answer.asString());
            assertEquals("WEBHOOK_SIGNATURE_INVALID", answer.jsonPath().getString("code"), answer.asString());
        });
        assertEquals(400, malformed.statusCode(), malformed.asString());
        assertEquals("MALFORMED_REQUEST", malformed.jsonPath().getString("code"));
        assertEquals(0, Webhooks.recorded(db, eventId), "nothing recorded");
        assertEquals("UNKNOWN", phaseOf(refund), "nothing settled");
        assertEquals(0, db.count("SELECT COUNT(*) FROM refund_phase WHERE event_id = ?", eventId));
    }

    /**
     * The simulator as the chaos run drives it, for refunds: every event sent twice, each copy 0.3 to
     * 0.6 s late and so out of order, beside a forged copy that says the opposite and a stale one;
     * every answer lost. Each refund is settled by its event, once; no forged or stale copy is recorded.
     */
    @Test
    void theSimulatorsEventsSettleEachRefundOnceThroughDuplicatesDelaysAndForgeries() {
        List<Long> orders = List.of(Buyer.withBalance(0).paidByCard(201, "tok_visa"), Buyer.withBalance(0).paidByCard(202, "tok_norefund_x"),
                Buyer.withBalance(0).paidByCard(203, "tok_visa"), Buyer.withBalance(0).paidByCard(204, "tok_norefund_x"));
        processor().webhooks().to(List.of(webhooks.toString()), Webhooks.secret(), new WebhookSender.Faults(1, 600, 1, 1));
        List<Long> refunds = orders.stream().map(order -> {
            processor().failNextRefundOf(order, Fault.RESET_AFTER_CHARGE);
            Response accepted = Api.refund(OPS, order, Api.newKey(), "r-1", 100);
            assertEquals(202, accepted.statusCode(), accepted.asString());
            return accepted.jsonPath().getLong("refundId");
        }).toList();

        for (int i = 0; i < refunds.size(); i++) {
            long refund = refunds.get(i);
            Response settled = awaitSettled(refund);
            String event = processor().webhooks().eventsAbout(settled.jsonPath().getString("processorKey")).get(0);
            assertEquals(i % 2 == 0 ? "SUCCEEDED" : "FAILED", settled.jsonPath().getString("phase"), settled.asString());
            assertEquals(1, db.count("SELECT COUNT(*) FROM refund_phase WHERE event_id = ?", event), "one effect of " + event);
            Await.until(() -> deliveriesOf(event + "_forged") + deliveriesOf(event + "_stale") == 2, Duration.ofSeconds(5),
                    "the forged and stale copies of " + event + " answered");
            assertEquals(0, Webhooks.recorded(db, event + "_forged") + Webhooks.recorded(db, event + "_stale"));
            assertEquals(i % 2 == 0 ? 100 : 0, db.refundedAmount(orders.get(i)));
        }
        assertTrue(processor().webhooks().deliveries().stream().filter(delivery -> delivery.kind() == WebhookSender.Kind.FORGED
                || delivery.kind() == WebhookSender.Kind.STALE).allMatch(delivery -> delivery.status() == 400), "every forgery refused with 400");
    }

    private long deliveriesOf(String eventId) {
        return processor().webhooks().deliveries().stream().filter(delivery -> delivery.eventId().equals(eventId)).count();
    }

    /** One inbox row naming the refund, one phase moved by the event, one refund.created event, the key's answer settled. */
    private void assertOneEffect(long refund, String eventId) {
        assertEquals(1, Webhooks.recorded(db, eventId));
        assertEquals(refund, db.count("SELECT refund_id FROM processor_event WHERE event_id = ?", eventId));
        assertEquals(1, db.count("SELECT COUNT(*) FROM refund_phase WHERE event_id = ?", eventId));
        assertEquals(1, db.count("SELECT COUNT(*) FROM refund_phase WHERE refund_id = ? AND phase = 'SUCCEEDED'", refund));
        assertEquals(1, refundEvents(refund));
        assertEquals("SUCCEEDED", phaseOf(refund));
        Response details = Api.as(OPS).get("/refunds/" + refund);
        Response retry = Api.refund(OPS, details.jsonPath().getLong("orderId"), keyOf(refund), details.jsonPath().getString("refundNo"),
                details.jsonPath().getLong("amount"));
        assertEquals(201, retry.statusCode(), retry.asString());
        assertEquals("true", retry.header("Idempotent-Replayed"), "the key's answer was settled once, as a lookup settles it");
    }

    /** A refund to the card of the whole of a new card payment, whose refund the processor made and whose answer it lost: 202, UNKNOWN. */
    private long unknownRefund(long amount) {
        long order = Buyer.withBalance(0).paidByCard(amount, "tok_visa");
        processor().failNextRefundOf(order, Fault.ERROR_AFTER_CHARGE);
        Response accepted = Api.refund(OPS, order, Api.newKey(), "r-1", amount);
        assertEquals(202, accepted.statusCode(), accepted.asString());
        long refund = accepted.jsonPath().getLong("refundId");
        assertEquals("UNKNOWN", phaseOf(refund));
        return refund;
    }

    /**
     * The processor's refund of {@code refund}, as its events carry it; one the processor never made
     * (its answer was a 500 before it refunded) as the processor would write it.
     */
    private JsonObject refundObject(long refund) {
        String key = db.processorKeyOfRefund(refund);
        ProcessorSimulator.Refund made = processor().refundUnder(key);
        if (made != null) {
            return made.json();
        }
        return new JsonObject().put("id", "re_unmade_" + refund).put("object", "refund")
                .put("charge", db.string("SELECT processor_charge_id FROM refund_record WHERE id = ?", refund))
                .put("amount", db.count("SELECT amount FROM refund_record WHERE id = ?", refund)).put("currency", "eur")
                .put("status", "succeeded").put("idempotency_key", key);
    }

    private long orderOf(long refund) {
        return db.count("SELECT order_id FROM refund_record WHERE id = ?", refund);
    }

    private String keyOf(long refund) {
        return db.string("SELECT idem_key FROM refund_record WHERE id = ?", refund);
    }

    private String phaseOf(long refund) {
        return db.refundPhase(refund);
    }

    private long refundEvents(long refund) {
        return db.count("SELECT COUNT(*) FROM outbox_event WHERE event_type = 'refund.created' AND ref_id = ?", Long.toString(refund));
    }

    private static List<String> history(long refund) {
        return Api.as(OPS).get("/refunds/" + refund).jsonPath().getList("history.phase");
    }

    /** Reads the refund until its phase is definite; fails after 10 s. */
    private static Response awaitSettled(long refund) {
        Response settled = Await.until(() -> Api.as(OPS).get("/refunds/" + refund),
                read -> List.of("SUCCEEDED", "FAILED").contains(read.jsonPath().getString("phase")), Duration.ofSeconds(10),
                "refund " + refund + " settled by its event");
        assertNotNull(settled.jsonPath().getString("processorKey"));
        return settled;
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
