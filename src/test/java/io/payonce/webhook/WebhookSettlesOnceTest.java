package io.payonce.webhook;

import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.processor.WebhookSender;
import io.payonce.support.Await;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.LockWaits;
import io.payonce.support.Meters;
import io.payonce.support.OperationKinds;
import io.payonce.support.OperationKinds.Begun;
import io.payonce.support.OperationKinds.Begun.EventLock;
import io.payonce.support.PausedRecoveryJob;
import io.payonce.support.RowHolder;
import io.payonce.support.Webhooks;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.net.URL;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The processor's webhook events settle an operation once, for every kind, against the real
 * database and the processor simulator: an event settles an operation whose outcome payonce lost, at
 * once, as a lookup would; each event id has one effect however often and however concurrently it
 * arrives, and each outcome one effect however many events tell it; an event that comes late,
 * contradicts what payonce recorded, describes another operation or names one payonce never made
 * changes nothing and is kept for ops; a delivery that is not the processor's is refused and writes
 * nothing. The recovery job is paused, so that whatever settles an operation here is a webhook.
 * Concurrent deliveries are made to meet by holding the row an event locks first until they all
 * wait; payonce's bounds outlast that.
 */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@ExtendWith(LedgerInvariants.class)
@PausedRecoveryJob
class WebhookSettlesOnceTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    @TestHTTPResource(Webhooks.PATH)
    URL webhooks;

    @AfterEach
    void resumeIt() {
        processor().heal();
    }

    /** The simulator makes it, loses its answer (payonce answers 202, UNKNOWN), and some 0.3 to 0.6 s later its event settles it. */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void theProcessorsEventSettlesAnOperationWhoseAnswerWasLostAtOnce(OperationKinds kind) {
        Begun operation = kind.begin();
        processor().webhooks().to(List.of(webhooks.toString()), Webhooks.secret(), new WebhookSender.Faults(0, 600, 0, 0));
        operation.failNext(Fault.ERROR_AFTER_CHARGE);

        Response accepted = operation.send();
        long id = operation.id(accepted);
        Response settled = awaitSettled(operation, accepted);

        assertEquals(202, accepted.statusCode(), accepted.asString());
        assertEquals("SUCCEEDED", settled.jsonPath().getString("phase"), settled.asString());
        assertEquals(operation.named("STARTED", "SENT", "UNKNOWN", "SUCCEEDED"), settled.jsonPath().getList("history.phase"));
        assertEquals(operation.succeeded(), operation.orderNow(db));
        String processorKey = settled.jsonPath().getString("processorKey");
        String event = processor().webhooks().eventsAbout(processorKey).get(0);
        assertEquals(event, operation.movedInto(db, id, "SUCCEEDED"), "the event's delivery moved it, not the paused recovery job");
        assertEquals(id, operation.kept(db, event, "APPLIED"));
        assertEquals(1, operation.successEvents(db, id), "its payment.succeeded or refund.created event");
        assertEquals(1, operation.requestsUnder(processorKey), "nothing was sent again");
        Response retry = operation.send();
        assertEquals(201, retry.statusCode(), retry.asString());
        assertEquals("true", retry.header("Idempotent-Replayed"), "the key's answer was settled as a lookup settles it");
        assertEquals("SUCCEEDED", retry.jsonPath().getString("phase"));
    }

    /**
     * The processor refused it (a declined card, a card that takes no refund) and its answer was lost:
     * the failure's event settles it, its key answers the 402, and what it held is given back: the
     * order is unpaid again, or none of it is refunded.
     */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void aFailureEventFailsAnUnknownOperationAndItsKeyAnswersTheRefusal(OperationKinds kind) {
        Begun operation = kind.beginRefused();
        Response accepted = unknown(operation);
        long id = operation.id(accepted);
        assertEquals(operation.whileUnknown(), operation.orderNow(db), "held while it is unknown");

        Response delivered = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), kind.processorFailedEvent(), operation.processorObject(db, id)));

        assertEquals(200, delivered.statusCode(), delivered.asString());
        assertEquals("APPLIED", delivered.jsonPath().getString("outcome"));
        String failed = operation.named("FAILED").get(0);
        assertEquals(failed, operation.phase(db, id));
        assertEquals(operation.named("STARTED", "SENT", "UNKNOWN", "FAILED"), operation.history(accepted));
        assertEquals(delivered.jsonPath().getString("eventId"), operation.movedInto(db, id, failed));
        assertEquals(operation.before(), operation.orderNow(db), "what it held is given back");
        assertEquals(0, operation.successEvents(db, id), "a failure has no event of a success");
        Response retry = operation.send();
        assertEquals(402, retry.statusCode(), retry.asString());
        assertEquals(operation.refusal(), retry.jsonPath().getString("code"));
        assertEquals(kind.refusedWith(), operation.failureCode(retry));
        assertEquals("true", retry.header("Idempotent-Replayed"));
    }

    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void aRedeliveryIsAnswered200AndChangesNothing(OperationKinds kind) {
        Begun operation = kind.begin();
        long id = operation.id(unknown(operation));
        String event = Webhooks.event(Webhooks.newEventId(), kind.processorSucceededEvent(), operation.processorObject(db, id));

        Response first = Webhooks.deliver(event);
        Response again = Webhooks.deliver(event);

        assertEquals(200, first.statusCode(), first.asString());
        assertEquals("APPLIED", first.jsonPath().getString("outcome"));
        assertNull(first.header("Idempotent-Replayed"));
        assertEquals(200, again.statusCode(), again.asString());
        assertEquals("APPLIED", again.jsonPath().getString("outcome"), "the first delivery's outcome");
        assertEquals("true", again.header("Idempotent-Replayed"));
        assertOneEffect(operation, id, first.jsonPath().getString("eventId"));
    }

    /**
     * Eight deliveries of one event: one is recorded with its effect, the seven others wait for it and
     * are repeats. The test holds the row the event locks first (the payment, or the refund's order),
     * so that the first delivery stops in its transaction with the event claimed, until the seven
     * others, all at once, wait on that claim.
     */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void concurrentDeliveriesOfOneEventHaveOneEffect(OperationKinds kind) throws Exception {
        Begun operation = kind.begin();
        long id = operation.id(unknown(operation));
        EventLock lock = operation.eventLock(id);
        String event = Webhooks.event(Webhooks.newEventId(), kind.processorSucceededEvent(), operation.processorObject(db, id));

        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdUntil(db, lock.table(), lock.row(), release);
        ExecutorService background = Executors.newFixedThreadPool(2);
        List<Response> answers = new ArrayList<>();
        try {
            Future<Response> first = background.submit(() -> Webhooks.deliver(event));
            db.awaitWaitingOnRow(lock.table(), lock.row(), lock.statementStart());
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
        assertOneEffect(operation, id, answers.get(0).jsonPath().getString("eventId"));
    }

    /**
     * Six events of one operation, each under its own id (a processor that sends the same news twice),
     * at the same moment: each is judged under the operation's locks, so one settles it and the others
     * find it settled alike. The test holds the row an event locks first until all six, each having
     * claimed its own id, wait on the operation's locks: on that row, or (a payment's, locked by its
     * processor key) on the key that the first of them holds, so they are counted on any row of its table.
     */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void concurrentEventsAboutOneOperationSettleItOnce(OperationKinds kind) throws Exception {
        Begun operation = kind.begin();
        long id = operation.id(unknown(operation));
        EventLock lock = operation.eventLock(id);
        JsonObject made = operation.processorObject(db, id);

        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdUntil(db, lock.table(), lock.row(), release);
        ExecutorService background = Executors.newSingleThreadExecutor();
        List<Response> answers;
        try {
            Future<List<Response>> events = background.submit(() -> Concurrently.run(6,
                    () -> Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), kind.processorSucceededEvent(), made))));
            assertEquals(6, LockWaits.awaitWaiting(db, lock.table(), null, lock.statementStart(), 6),
                    "set-up: the six events wait on the operation's locks together");
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
        assertEquals(1, operation.entered(db, id, "SUCCEEDED"));
        assertEquals(1, operation.successEvents(db, id));
    }

    /**
     * A success or a failure under the operation's key but of another amount, currency, reference or
     * (a refund's) charge is not this operation: nothing settles or moves, what it holds stays held (a
     * failure of another charge or refund must not free the order for a second one), and the
     * operation's own lookup will meet it.
     */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void anOutcomeOfAnotherAmountCurrencyReferenceOrChargeUnderTheKeyNeverSettlesIt(OperationKinds kind) {
        Begun operation = kind.begin();
        long id = operation.id(unknown(operation));

        for (JsonObject other : kind.otherThan(operation.processorObject(db, id))) {
            for (String type : List.of(kind.processorSucceededEvent(), kind.processorFailedEvent())) {
                JsonObject object = type.equals(kind.processorFailedEvent()) ? kind.asFailed(other) : other;
                Response delivered = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), type, object));

                assertEquals(200, delivered.statusCode(), delivered.asString());
                assertEquals("CONTRADICTING", delivered.jsonPath().getString("outcome"), type + " " + object.encode());
                assertEquals(0, operation.movedBy(db, delivered.jsonPath().getString("eventId")));
            }
        }
        assertEquals("UNKNOWN", operation.phase(db, id));
        assertEquals(operation.whileUnknown(), operation.orderNow(db), "still held");
        assertEquals(0, operation.successEvents(db, id));
    }

    /**
     * Under a succeeded operation's key, its own charge or refund again, under another event id, is a
     * repeat, ALREADY_SETTLED. A late failure is not, nor another charge or refund, even of its very
     * amount and order: a second one of the card (the processor forgot the key and took a resend as
     * new). Each is CONTRADICTING, changes nothing and is kept for ops, never filed as a quiet repeat.
     */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void underASucceededOperationsKeyALateFailureOrASecondObjectIsAContradictionNotARepeat(OperationKinds kind) {
        Begun operation = kind.begin();
        Response done = operation.send();
        assertEquals(201, done.statusCode(), done.asString());

        assertItsOwnRepeatsAndAnyOtherContradicts(operation, done, kind.processorSucceededEvent(), kind.processorFailedEvent(), kind::asFailed);
        long id = operation.id(done);
        assertEquals("SUCCEEDED", operation.phase(db, id));
        assertEquals(operation.named("STARTED", "SENT", "SUCCEEDED"), operation.history(done));
        assertEquals(operation.succeeded(), operation.orderNow(db), "the order paid, or the refund still holding its amount");
        assertEquals(1, operation.successEvents(db, id));
    }

    /** Under a failed operation's key, its own failure again is a repeat; a late success, or a failure naming another object, contradicts. */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void underAFailedOperationsKeyALateSuccessOrASecondObjectIsAContradictionNotARepeat(OperationKinds kind) {
        Begun operation = kind.beginRefused();
        Response refused = operation.send();
        assertEquals(402, refused.statusCode(), refused.asString());
        assertNotNull(operation.recorded(operation.shown(refused)), "set-up: the failure named the processor's object");

        assertItsOwnRepeatsAndAnyOtherContradicts(operation, refused, kind.processorFailedEvent(), kind.processorSucceededEvent(),
                made -> made.copy().put("status", "succeeded"));
        long id = operation.id(refused);
        assertEquals(operation.named("FAILED").get(0), operation.phase(db, id));
        assertEquals(operation.named("STARTED", "SENT", "FAILED"), operation.history(refused));
        assertEquals(operation.before(), operation.orderNow(db), "the order unpaid, or nothing of it refunded");
        assertEquals(0, operation.successEvents(db, id));
    }

    /**
     * An event under an UNKNOWN operation's key that names, with the operation's own amount and order,
     * a processor object another operation recorded already (a processor's bug, or two of its ids
     * alike once kept): not this operation's. Answered 200 and kept as CONTRADICTING, never a 500 the
     * processor would deliver again for days; nothing moves, and the other keeps its own.
     */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void anEventNamingAnObjectAnotherOperationRecordedIsKeptAsAContradiction(OperationKinds kind) {
        Begun other = kind.begin();
        Response first = other.send();
        assertEquals(201, first.statusCode(), first.asString());
        String recorded = other.recorded(other.shown(first));
        Begun operation = kind.begin();
        Response accepted = unknown(operation);
        long id = operation.id(accepted);

        for (String type : List.of(kind.processorSucceededEvent(), kind.processorFailedEvent())) {
            JsonObject named = operation.processorObject(db, id).put("id", recorded);
            JsonObject object = type.equals(kind.processorFailedEvent()) ? kind.asFailed(named) : named;
            String eventId = Webhooks.newEventId();
            Response delivered = Webhooks.deliver(Webhooks.event(eventId, type, object));

            assertEquals(200, delivered.statusCode(), delivered.asString());
            assertEquals("CONTRADICTING", delivered.jsonPath().getString("outcome"), type);
            assertEquals(id, operation.kept(db, eventId, "CONTRADICTING"), "kept for ops, naming it");
            assertEquals(0, operation.movedBy(db, eventId));
        }
        assertEquals("UNKNOWN", operation.phase(db, id));
        assertEquals(operation.named("STARTED", "SENT", "UNKNOWN"), operation.history(accepted));
        assertEquals(operation.whileUnknown(), operation.orderNow(db), "still held");
        assertEquals(0, operation.successEvents(db, id));
        Response otherShown = other.shown(first);
        assertEquals("SUCCEEDED", otherShown.jsonPath().getString("phase"));
        assertEquals(recorded, other.recorded(otherShown));
    }

    /** Under a key no operation of payonce's was made under, or under none: recorded, counted, and nothing is created or moved. */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void anEventForAnOperationPayonceNeverMadeIsRecordedCountedAndCreatesNothing(OperationKinds kind) {
        String outcome = kind.unknownOutcome();
        double before = meters.count(WebhookMeter.NAME, "outcome", outcome.toLowerCase(Locale.ROOT));
        String key = "po_" + Webhooks.newEventId();
        JsonObject stranger = kind.stranger(key);
        JsonObject keyless = kind.asFailed(stranger).put("idempotency_key", (String) null);
        String eventId = Webhooks.newEventId();
        long payments = db.count("SELECT COUNT(*) FROM pay_record");
        long refunds = db.count("SELECT COUNT(*) FROM refund_record");
        long orders = db.count("SELECT COUNT(*) FROM orders");
        long refundedInAll = db.count("SELECT COALESCE(SUM(refunded_amount), 0) FROM orders");

        Response delivered = Webhooks.deliver(Webhooks.event(eventId, kind.processorSucceededEvent(), stranger));
        Response unnamed = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), kind.processorFailedEvent(), keyless));

        assertEquals(200, delivered.statusCode(), delivered.asString());
        assertEquals(outcome, delivered.jsonPath().getString("outcome"));
        assertEquals(outcome, unnamed.jsonPath().getString("outcome"), unnamed.asString());
        assertEquals(before + 2, meters.count(WebhookMeter.NAME, "outcome", outcome.toLowerCase(Locale.ROOT)));
        assertEquals(key, db.string("SELECT processor_key FROM processor_event WHERE event_id = ? AND outcome = ? "
                + "AND refund_id IS NULL AND payment_id IS NULL", eventId, outcome));
        assertEquals(payments, db.count("SELECT COUNT(*) FROM pay_record"), "no payment is created");
        assertEquals(refunds, db.count("SELECT COUNT(*) FROM refund_record"), "no refund is created");
        assertEquals(orders, db.count("SELECT COUNT(*) FROM orders"));
        assertEquals(refundedInAll, db.count("SELECT COALESCE(SUM(refunded_amount), 0) FROM orders"), "no order's refunds move");
    }

    /**
     * A delivery that is not the processor's, or not now, and an event whose type says otherwise than
     * its object: 400, and the event it carries is not recorded and changes nothing.
     */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void aForgedStaleOrMalformedEventIsRefusedAndNothingIsWritten(OperationKinds kind) {
        Begun operation = kind.begin();
        long id = operation.id(unknown(operation));
        String eventId = Webhooks.newEventId();
        String event = Webhooks.event(eventId, kind.processorSucceededEvent(), operation.processorObject(db, id));
        String contradictory = Webhooks.event(eventId, kind.processorSucceededEvent(), kind.asFailed(operation.processorObject(db, id)));
        long now = System.currentTimeMillis() / 1000;
        double refusedBefore = meters.count(WebhookMeter.NAME, "outcome", "refused");

        List<Response> forged = List.of(
                Webhooks.deliver(event, WebhookSender.signature("whsec_someone_elses_secret", now, event)),
                Webhooks.deliver(event, WebhookSender.signature(Webhooks.secret(), now - 600, event)),
                Webhooks.deliver(event, WebhookSender.signature(Webhooks.secret(), now + 600, event)),
                Webhooks.deliver(event, WebhookSender.signature(Webhooks.secret(), now, event.replace("1", "2"))),
                Webhooks.deliver(event, "t=" + now),
                Webhooks.deliver(event, "garbage"),
                RestAssured.given().contentType("application/json").body(event).post(Webhooks.PATH));
        Response malformed = Webhooks.deliver(contradictory);

        forged.forEach(answer -> {
            assertEquals(400, answer.statusCode(), answer.asString());
            assertEquals("WEBHOOK_SIGNATURE_INVALID", answer.jsonPath().getString("code"), answer.asString());
        });
        assertEquals(400, malformed.statusCode(), malformed.asString());
        assertEquals("MALFORMED_REQUEST", malformed.jsonPath().getString("code"));
        assertEquals(0, Webhooks.recorded(db, eventId), "nothing recorded");
        assertEquals("UNKNOWN", operation.phase(db, id), "nothing settled");
        assertEquals(0, operation.movedBy(db, eventId));
        assertEquals(refusedBefore + forged.size() + 1, meters.count(WebhookMeter.NAME, "outcome", "refused"));
    }

    /**
     * The simulator as the chaos run drives it: every event sent twice, each copy 0.3 to 0.6 s late and
     * so out of order, beside a forged copy that says the opposite and a stale one; every answer lost.
     * Each operation, made or refused, is settled by its event, once; no forged or stale copy is recorded.
     */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void theSimulatorsEventsSettleEachOperationOnceThroughDuplicatesDelaysAndForgeries(OperationKinds kind) {
        List<Begun> operations = List.of(kind.begin(), kind.beginRefused(), kind.begin(), kind.beginRefused());
        processor().webhooks().to(List.of(webhooks.toString()), Webhooks.secret(), new WebhookSender.Faults(1, 600, 1, 1));
        List<Response> accepted = operations.stream().map(operation -> {
            operation.failNext(Fault.RESET_AFTER_CHARGE);
            Response answer = operation.send();
            assertEquals(202, answer.statusCode(), answer.asString());
            return answer;
        }).toList();

        for (int i = 0; i < operations.size(); i++) {
            Begun operation = operations.get(i);
            boolean made = i % 2 == 0;
            Response settled = awaitSettled(operation, accepted.get(i));
            String event = processor().webhooks().eventsAbout(settled.jsonPath().getString("processorKey")).get(0);
            assertEquals(operation.named(made ? "SUCCEEDED" : "FAILED").get(0), settled.jsonPath().getString("phase"), settled.asString());
            assertEquals(made ? operation.succeeded() : operation.before(), operation.orderNow(db));
            assertEquals(1, operation.movedBy(db, event), "one effect of " + event);
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

    /**
     * Events under the key of {@code operation}, settled as {@code settled} answered: its own processor
     * object again ({@code type}) is a repeat; another, told by its id, and the object turned to the
     * opposite outcome ({@code turnedType}, {@code turn}) contradict it, each kept for ops, naming it,
     * and counted for the alert.
     */
    private void assertItsOwnRepeatsAndAnyOtherContradicts(Begun operation, Response settled, String type, String turnedType,
                                                           UnaryOperator<JsonObject> turn) {
        long id = operation.id(settled);
        JsonObject made = operation.processorObject(db, id);
        double contradictions = meters.count(WebhookMeter.NAME, "outcome", "contradicting");
        String secondId = Webhooks.newEventId();
        String lateId = Webhooks.newEventId();

        Response again = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), type, made));
        Response second = Webhooks.deliver(Webhooks.event(secondId, type, made.copy().put("id", made.getString("id") + "_second")));
        Response late = Webhooks.deliver(Webhooks.event(lateId, turnedType, turn.apply(made)));

        assertEquals(200, again.statusCode(), again.asString());
        assertEquals("ALREADY_SETTLED", again.jsonPath().getString("outcome"));
        for (Response contradicting : List.of(second, late)) {
            assertEquals(200, contradicting.statusCode(), contradicting.asString());
            assertEquals("CONTRADICTING", contradicting.jsonPath().getString("outcome"), contradicting.asString());
        }
        assertEquals(id, operation.kept(db, secondId, "CONTRADICTING"), "kept for ops, naming it");
        assertEquals(id, operation.kept(db, lateId, "CONTRADICTING"), "kept for ops, naming it");
        assertEquals(contradictions + 2, meters.count(WebhookMeter.NAME, "outcome", "contradicting"));
    }

    /**
     * One inbox row naming the operation, one phase moved by the event, one event of its success in the
     * outbox, and the key's answer settled once, as a lookup settles it.
     */
    private void assertOneEffect(Begun operation, long id, String eventId) {
        assertEquals(1, Webhooks.recorded(db, eventId));
        assertEquals(id, operation.kept(db, eventId, "APPLIED"));
        assertEquals(1, operation.movedBy(db, eventId));
        assertEquals(1, operation.entered(db, id, "SUCCEEDED"));
        assertEquals(1, operation.successEvents(db, id));
        assertEquals("SUCCEEDED", operation.phase(db, id));
        Response retry = operation.send();
        assertEquals(201, retry.statusCode(), retry.asString());
        assertEquals("true", retry.header("Idempotent-Replayed"), "the key's answer was settled once, as a lookup settles it");
    }

    /** The operation's request, which the processor carries out and whose answer it loses: 202, and the operation UNKNOWN. */
    private Response unknown(Begun operation) {
        operation.failNext(Fault.ERROR_AFTER_CHARGE);
        Response accepted = operation.send();
        assertEquals(202, accepted.statusCode(), accepted.asString());
        assertEquals("UNKNOWN", operation.phase(db, operation.id(accepted)));
        return accepted;
    }

    /** Reads the operation that {@code accepted} answered until its phase is definite; fails after 10 s. */
    private static Response awaitSettled(Begun operation, Response accepted) {
        List<String> definite = operation.named("SUCCEEDED", "FAILED");
        Response settled = Await.until(() -> operation.shown(accepted), read -> definite.contains(read.jsonPath().getString("phase")), WAIT,
                operation.kind() + " " + operation.id(accepted) + " settled by its event");
        assertNotNull(settled.jsonPath().getString("processorKey"));
        return settled;
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
