package io.payonce.payment.operation;

import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.processor.ProcessorText;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.LockWaits;
import io.payonce.support.OperationKinds;
import io.payonce.support.OperationKinds.Begun;
import io.payonce.support.OperationKinds.Lock;
import io.payonce.support.PausedRecoveryJob;
import io.payonce.support.Replays;
import io.payonce.support.RowHolder;
import io.payonce.support.Tokens;
import io.quarkus.arc.All;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
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
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ops settle an operation the processor cannot account for ({@link OperatorSettlements}), for every
 * kind, against the processor simulator: the operation's answer is lost (202, UNKNOWN), and its first
 * send is moved back beyond resend-within, as an hour of the recovery job finding nothing under its key
 * would leave it. The processor must confirm what the operator says; a refusal writes nothing and
 * leaves the key free; a settlement is recorded as the processor's own outcome would be, with an audit
 * row and an event, once, whoever races it. What proves that a kind's operation made nothing is the
 * kind's own ({@code NotChargedTest}, {@code NotRefundedTest}). The recovery job is paused so that
 * nothing but the test moves an operation, except where a test races it on purpose. The races are set
 * up by holding the row the racers wait for until every one of them waits; payonce's bounds outlast that.
 */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@WithTestResource(value = ProcessorSimulatorResource.class, scope = TestResourceScope.GLOBAL)
@ExtendWith(LedgerInvariants.class)
@PausedRecoveryJob
class OperatorSettlementsTest {

    private static final Duration WAIT = Duration.ofSeconds(5);

    /** Why an operator says the processor made nothing. */
    private static final String NOTHING_SHOWN = "the processor's dashboard shows nothing for this order";

    private final Database db = Database.forTests();

    /** Whether this application's processor client has made its first refund, which loads and connects it. */
    private static boolean warm;

    @Inject
    RecoveryJob recovery;

    @Inject
    Pool pool;

    @Inject
    @All
    List<OperationKind<?, ?, ?>> kinds;

    /** A refund to the card first: a cold client's first call can outlast a short processor timeout. */
    @BeforeEach
    void warmTheClient() {
        if (!warm) {
            OperationKinds.REFUND.begin().send();
            warm = true;
        }
    }

    @AfterEach
    void healAndResume() {
        processor().heal();
        processor().up();
    }

    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void settledAsNotMadeTheOperationFailsWhatItHeldIsFreeAgainAndItsKeyAnswersTheFailure(OperationKinds kind) {
        Begun operation = kind.begin();
        long id = overdue(operation, Fault.ERROR_BEFORE_CHARGE);
        String processorKey = operation.processorKey(db, id);
        String operator = "ops-" + UUID.randomUUID();
        String ops = Tokens.ops(operator);
        String key = Api.newKey();

        Response settled = operation.settle(ops, id, key, notMade(kind));
        Response replay = operation.settle(ops, id, key, notMade(kind));
        Response clientsRetry = operation.send();

        assertEquals(201, settled.statusCode(), settled.asString());
        assertEquals(kind.notMade(), settled.jsonPath().getString("outcome"));
        assertEquals(failed(operation), settled.jsonPath().getString("phase"));
        assertEquals(id, operation.id(settled));
        assertEquals(operation.saidOfNothingMade(), settled.jsonPath().getString("processorSaid"));
        Replays.assertReplayOf(settled, replay);
        assertEquals(402, clientsRetry.statusCode(), clientsRetry.asString());
        assertEquals(operation.failedCode(), clientsRetry.jsonPath().getString("code"));
        assertEquals("settled_" + kind.notMade(), operation.failedBecause(clientsRetry));
        assertEquals("true", clientsRetry.header("Idempotent-Replayed"), "the key's answer was stored with the settlement");
        assertEquals(failed(operation), operation.phase(db, id));
        assertEquals(operation.named("STARTED", "SENT", "UNKNOWN", "FAILED"), operation.phases(db, id));
        assertEquals(operation.before(), operation.orderNow(db), "what the operation held is free again");
        assertNull(operation.idUnder(processorKey), "nothing was made under the settled operation's key");
        assertAudited(operation, id, operator, key, kind.notMade(), null, settled);
        assertEquals(0, operation.events(db, id, operation.succeededEvent()));
        Response madeAnew = operation.sendAnew();
        assertEquals(201, madeAnew.statusCode(), "made anew under another key: " + madeAnew.asString());
        assertEquals(operation.succeeded(), operation.orderNow(db));
    }

    /**
     * The processor finds the object only by its id (it forgot the key), and the operator names it:
     * the operation succeeds. So too for an object made under an id payonce cannot keep (longer than
     * it keeps), which recovery can then no longer find: the operator names the id as the processor
     * wrote it, and the operation is recorded without an id, as the processor's own answer would have
     * had it; the audit row, the answer and the ops view show the id marked as one payonce cannot keep.
     */
    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("objectsFoundOnlyById")
    void settledAsMadeByAnObjectTheProcessorFindsOnlyByItsIdTheOperationSucceeds(OperationKinds kind, String description, boolean tooLong) {
        Begun operation = kind.begin();
        long id = overdue(operation, Fault.ERROR_BEFORE_CHARGE);
        String found = tooLong ? operation.foundOnlyByItsId("x_" + "9".repeat(298) + UUID.randomUUID().toString().replace("-", ""))
                : operation.foundOnlyById();
        String kept = tooLong ? null : found;
        String shown = tooLong ? "?" + found.substring(0, 254) : found;
        String operator = "ops-" + UUID.randomUUID();
        String key = Api.newKey();

        Response settled = operation.settle(Tokens.ops(operator), id, key, made(kind, found));
        Response clientsRetry = operation.send();

        assertEquals(201, settled.statusCode(), settled.asString());
        assertEquals("SUCCEEDED", settled.jsonPath().getString("phase"));
        assertEquals(shown, settled.jsonPath().getString(kind.idField()));
        assertEquals("by id: " + operation.said(ProcessorText.shown(kept)) + "; " + operation.underKey() + operation.none(),
                settled.jsonPath().getString("processorSaid"));
        assertEquals(201, clientsRetry.statusCode(), clientsRetry.asString());
        assertEquals("SUCCEEDED", clientsRetry.jsonPath().getString("phase"));
        assertEquals("true", clientsRetry.header("Idempotent-Replayed"));
        assertEquals(operation.succeeded(), operation.orderNow(db));
        assertEquals(kept, operation.recorded(db, id), "an id payonce cannot keep exactly is never recorded as one");
        assertEquals(operation.named("STARTED", "SENT", "UNKNOWN", "SUCCEEDED"), operation.phases(db, id));
        assertAudited(operation, id, operator, key, kind.made(), shown, shows(found), settled);
        assertEquals(1, operation.events(db, id, operation.succeededEvent()),
                "the money moved: the event every operation of the kind that succeeded has");
    }

    static Stream<Arguments> objectsFoundOnlyById() {
        return forEachKind(Arguments.of("an id payonce keeps", false), Arguments.of("an id longer than payonce keeps", true));
    }

    /**
     * A processor (or a proxy) that cuts the ids it is asked for answers the lookup of one id payonce
     * cannot keep with another object that begins alike, this operation's in all else: it is not the
     * object named, whose id neither can be kept to tell them apart, and nothing is settled.
     */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void anObjectAnsweredForAnotherIdPayonceCannotKeepIsNotTheOneNamed(OperationKinds kind) {
        Begun operation = kind.begin();
        long id = overdue(operation, Fault.ERROR_BEFORE_CHARGE);
        String alike = "x_" + "9".repeat(298) + UUID.randomUUID().toString().replace("-", "");
        operation.foundOnlyByItsId(alike + "a");
        processor().matchIdsOnTheirFirst(alike.length());

        Response refused = operation.settle(Tokens.ops(), id, Api.newKey(), made(kind, alike + "b"));

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertNothingSettled(operation, id);
    }

    /** The processor holds the object under the operation's key too, and it is the one named. */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void settledAsMadeByTheObjectUnderTheOperationsOwnKey(OperationKinds kind) {
        Begun operation = kind.begin();
        long id = overdue(operation, Fault.ERROR_AFTER_CHARGE);
        String madeId = operation.idUnder(operation.processorKey(db, id));

        Response settled = operation.settle(Tokens.ops(), id, Api.newKey(), made(kind, madeId));

        assertEquals(201, settled.statusCode(), settled.asString());
        assertTrue(settled.jsonPath().getString("processorSaid").endsWith(operation.underKey() + operation.said(madeId)), settled.asString());
        assertEquals("SUCCEEDED", operation.phase(db, id));
        assertEquals(operation.succeeded(), operation.orderNow(db));
    }

    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void notMadeIsRefusedWhileTheProcessorHoldsAnObjectUnderTheOperationsKeyAndTheKeyStaysFree(OperationKinds kind) {
        Begun operation = kind.begin();
        long id = overdue(operation, Fault.ERROR_AFTER_CHARGE);
        String madeId = operation.idUnder(operation.processorKey(db, id));
        String ops = Tokens.ops();
        String key = Api.newKey();

        Response refused = operation.settle(ops, id, key, notMade(kind));

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertTrue(refused.jsonPath().getString("detail").contains(operation.underKey() + madeId + " succeeded"), refused.asString());
        assertNothingSettled(operation, id);
        Response corrected = operation.settle(ops, id, key, made(kind, madeId));
        assertEquals(201, corrected.statusCode(), "a refusal is not stored under the key: " + corrected.asString());
    }

    /** An object named as this operation's, that the processor describes otherwise. */
    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("objectsNotThisOperations")
    void madeIsRefusedWhenTheNamedObjectIsNotThisOperations(OperationKinds kind, String description, long moreThanItsAmount, String currency,
                                                           String reference) {
        Begun operation = kind.begin();
        long id = overdue(operation, Fault.ERROR_BEFORE_CHARGE);
        String named = switch (reference) {
            case "this" -> operation.reference();
            case "another" -> operation.reference() + "x";
            default -> null;
        };
        String other = operation.foundOnlyById(operation.amount() + moreThanItsAmount, currency, named);

        Response refused = operation.settle(Tokens.ops(), id, Api.newKey(), made(kind, other));

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertNothingSettled(operation, id);
    }

    static Stream<Arguments> objectsNotThisOperations() {
        return forEachKind(
                Arguments.of("another amount", 1L, "EUR", "this"),
                Arguments.of("another currency", 0L, "USD", "this"),
                Arguments.of("another reference", 0L, "EUR", "another"),
                Arguments.of("no reference", 0L, "EUR", "none"));
    }

    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void madeIsRefusedForAnObjectTheProcessorDoesNotKnowOrThatItRefused(OperationKinds kind) {
        Begun operation = kind.begin();
        long id = overdue(operation, Fault.ERROR_BEFORE_CHARGE);
        Begun refused = kind.beginRefused();
        long refusedId = overdue(refused, Fault.ERROR_AFTER_CHARGE);
        String refusedObject = refused.idUnder(refused.processorKey(db, refusedId));

        Response unknown = operation.settle(Tokens.ops(), id, Api.newKey(), made(kind, "x_nobody_made_this"));
        Response refusedOne = refused.settle(Tokens.ops(), refusedId, Api.newKey(), made(kind, refusedObject));

        assertRefused(unknown, "PROCESSOR_DISAGREES");
        assertTrue(unknown.jsonPath().getString("detail").contains("by id: " + operation.none()), unknown.asString());
        assertRefused(refusedOne, "PROCESSOR_DISAGREES");
        assertTrue(refusedOne.jsonPath().getString("detail").contains(refused.saidOfRefused(refusedObject)), refusedOne.asString());
        assertNothingSettled(operation, id);
        assertNothingSettled(refused, refusedId);
    }

    /** The object named is this operation's in every word, but the operation's own key holds another: that one is the operation's. */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void madeIsRefusedWhenTheOperationsKeyHoldsAnotherObject(OperationKinds kind) {
        Begun operation = kind.begin();
        long id = overdue(operation, Fault.ERROR_AFTER_CHARGE);
        String lookalike = operation.foundOnlyById();

        Response refused = operation.settle(Tokens.ops(), id, Api.newKey(), made(kind, lookalike));

        assertRefused(refused, "PROCESSOR_DISAGREES");
        assertNothingSettled(operation, id);
    }

    /**
     * One object at the processor settles one operation: an object another operation of the kind
     * already holds is refused with a clear 409, whatever the processor says of it, and nothing is settled.
     */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void anObjectAnotherOperationHoldsIsRefused(OperationKinds kind) {
        Begun holder = kind.begin();
        long holderId = overdue(holder, Fault.ERROR_BEFORE_CHARGE);
        Begun operation = kind.begin();
        long id = overdue(operation, Fault.ERROR_BEFORE_CHARGE);
        String found = operation.foundOnlyById();
        holder.recordOn(db, holderId, found);
        String key = Api.newKey();

        Response refused = operation.settle(Tokens.ops(), id, key, made(kind, found));
        Response again = operation.settle(Tokens.ops(), id, key, made(kind, found));

        assertRefused(refused, operation.recordedElsewhere());
        assertTrue(refused.jsonPath().getString("detail").contains(found), refused.asString());
        assertRefused(again, operation.recordedElsewhere());
        assertNothingSettled(operation, id);
    }

    /**
     * Every processor id payonce records can be named, dots and colons too, and one longer than it
     * keeps, up to 1000 characters; "." and ".." never reach the processor's path.
     */
    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("processorIds")
    void anIdIsNamedInTheCharactersPayonceKeepsOfIt(OperationKinds kind, String processorId, int status) {
        Begun operation = kind.begin();
        long id = overdue(operation, Fault.ERROR_BEFORE_CHARGE);

        Response answer = operation.settle(Tokens.ops(), id, Api.newKey(), made(kind, processorId));

        assertEquals(status, answer.statusCode(), answer.asString());
        assertEquals(status == 409 ? "PROCESSOR_DISAGREES" : "VALIDATION_FAILED", answer.jsonPath().getString("code"), answer.asString());
        assertNothingSettled(operation, id);
    }

    static Stream<Arguments> processorIds() {
        return forEachKind(Arguments.of("x_1.a:b", 409), Arguments.of("x.:-_Z9", 409), Arguments.of(".", 400), Arguments.of("..", 400),
                Arguments.of("x/1", 400), Arguments.of("x".repeat(1000), 409), Arguments.of("x".repeat(1001), 400));
    }

    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void anOperationPayonceMayStillSettleItselfIsNotOverdue(OperationKinds kind) {
        Begun recent = kind.begin();
        long recentId = lost(recent, Fault.ERROR_BEFORE_CHARGE);
        Begun neverSent = kind.begin();
        long neverSentId = overdue(neverSent, Fault.ERROR_BEFORE_CHARGE);
        db.update("UPDATE " + neverSent.table() + " SET first_sent_at = NULL WHERE id = ?", neverSentId);

        Response tooSoon = recent.settle(Tokens.ops(), recentId, Api.newKey(), notMade(kind));
        Response notSent = neverSent.settle(Tokens.ops(), neverSentId, Api.newKey(), notMade(kind));

        assertRefused(tooSoon, "NOT_OVERDUE");
        assertRefused(notSent, "NOT_OVERDUE");
        assertNothingSettled(recent, recentId);
        assertNothingSettled(neverSent, neverSentId);
    }

    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void aSettledOperationIsNotSettledAgain(OperationKinds kind) {
        Begun operation = kind.begin();
        long madeId = operation.id(Await.until(operation::send, answer -> answer.statusCode() == 201, Duration.ofSeconds(20),
                "a " + kind + " the processor made"));
        long throughTheBalance = kind.throughTheBalance();

        Response made = operation.settle(Tokens.ops(), madeId, Api.newKey(), notMade(kind));
        Response fromTheBalance = operation.settle(Tokens.ops(), throughTheBalance, Api.newKey(), notMade(kind));
        Response missing = operation.settle(Tokens.ops(), Long.MAX_VALUE, Api.newKey(), notMade(kind));

        assertRefused(made, "ALREADY_SETTLED");
        assertRefused(fromTheBalance, "ALREADY_SETTLED");
        assertEquals(404, missing.statusCode(), missing.asString());
        assertEquals(operation.notFound(), missing.jsonPath().getString("code"));
        assertEquals(operation.succeeded(), operation.orderNow(db));
        assertEquals(0, operation.settlements(db, madeId) + operation.settlements(db, throughTheBalance));
    }

    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void anOperationIsNotSettledWhileAWorkerHoldsItsLease(OperationKinds kind) {
        Begun operation = kind.begin();
        long id = overdue(operation, Fault.ERROR_BEFORE_CHARGE);
        db.update("UPDATE " + operation.table() + " SET leased_until = NOW(6) + INTERVAL 1 MINUTE WHERE id = ?", id);
        String ops = Tokens.ops();
        String key = Api.newKey();

        Response refused = operation.settle(ops, id, key, notMade(kind));

        assertRefused(refused, "WORKER_HOLDS_LEASE");
        assertEquals("1", refused.header("Retry-After"));
        assertNothingSettled(operation, id);
        db.update("UPDATE " + operation.table() + " SET leased_until = NOW(6) - INTERVAL 1 SECOND WHERE id = ?", id);
        assertEquals(201, operation.settle(ops, id, key, notMade(kind)).statusCode(), "the same request, once the lease has run out");
    }

    /**
     * The request holds the operation's lease while it waits for the processor, which holds the call
     * until the test has read the lease, and gives it back with its answer.
     */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void anOperationOnItsWayToTheProcessorIsLeased(OperationKinds kind) throws Exception {
        Begun operation = kind.begin();
        operation.failNext(Fault.HELD);

        CompletableFuture<Response> sending = CompletableFuture.supplyAsync(operation::send);
        Await.until(() -> operation.held() == 1, Duration.ofSeconds(10), "the " + kind + " of order " + operation.order() + " held at the processor");
        long id = db.count("SELECT id FROM " + operation.table() + " WHERE order_id = ?", operation.order());
        String sent = operation.named("SENT").get(0);
        assertEquals(sent, operation.phase(db, id), "set-up: the operation's call is on its way");
        long leasedWhileSent = db.count("SELECT COUNT(*) FROM " + operation.table() + " WHERE id = ? AND phase = ? AND leased_until > NOW(6)",
                id, sent);
        assertFalse(sending.isDone(), "set-up: the lease was read while the request still waited for the processor");
        operation.release();
        Response answered = sending.get(10, TimeUnit.SECONDS);

        assertEquals(1, leasedWhileSent, "the worker that sends holds the lease");
        assertEquals(201, answered.statusCode(), answered.asString());
        assertEquals(0, leased(operation, id));
    }

    /** The request and the recovery job take the lease, and a worker's step that ends with the outcome unknown gives back its own only. */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void aWorkerGivesBackItsOwnLeaseAndNeverAnotherWorkersOne(OperationKinds kind) {
        leaseGivenBack(lifecycleKindOf(kind), kind.begin());
    }

    private <O extends Operation<O>> void leaseGivenBack(OperationKind<O, ?, ?> lifecycleKind, Begun operation) {
        long id = lost(operation, Fault.ERROR_BEFORE_CHARGE);
        assertEquals(0, leased(operation, id), "the request that got the 202 gave its lease back");
        db.update("UPDATE " + operation.table() + " SET busy_until = NOW(6) - INTERVAL 1 SECOND WHERE id = ?", id);
        O stale = lifecycleKind.rows.findUnattended(pool, 100_000).await().atMost(WAIT).stream()
                .filter(unattended -> unattended.id() == id).findFirst().orElseThrow();

        assertTrue(lifecycleKind.rows.takeLease(pool, stale, Duration.ofMinutes(1)).await().atMost(WAIT), "another worker takes it over");
        assertEquals(1, leased(operation, id), "taking the operation over takes its lease");
        markUnknown(lifecycleKind, stale);
        assertEquals(1, leased(operation, id), "the stale worker's late outcome left the lease of the one that took over");
        markUnknown(lifecycleKind, stale.nextAttempt());
        assertEquals(0, leased(operation, id), "the worker that holds it gave it back");
    }

    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void anUnclearProcessorSettlesNothing(OperationKinds kind) {
        Begun operation = kind.begin();
        long id = overdue(operation, Fault.ERROR_BEFORE_CHARGE);
        processor().down();

        Response refused = operation.settle(Tokens.ops(), id, Api.newKey(), notMade(kind));

        processor().up();
        assertEquals(503, refused.statusCode(), refused.asString());
        assertEquals("PROCESSOR_UNAVAILABLE", refused.jsonPath().getString("code"));
        assertEquals("1", refused.header("Retry-After"));
        assertNothingSettled(operation, id);
    }

    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void onlyOpsSettleAndAKeyIsBoundToItsRequest(OperationKinds kind) {
        Begun operation = kind.begin();
        long id = overdue(operation, Fault.ERROR_BEFORE_CHARGE);
        String owner = db.string("SELECT user_id FROM orders WHERE id = ?", operation.order());
        String ops = Tokens.ops();
        String key = Api.newKey();

        Response byTheOwner = operation.settle(Tokens.user(owner), id, key, notMade(kind));
        Response byAMerchant = operation.settle(Tokens.lastingAnHour("merchant-" + UUID.randomUUID(), "merchant"), id, key, notMade(kind));
        Response first = operation.settle(ops, id, key, notMade(kind));
        Response otherRequestSameKey = operation.settle(ops, id, key, Map.of("outcome", kind.notMade(), "reason", "another reason"));

        assertEquals(403, byTheOwner.statusCode(), byTheOwner.asString());
        assertEquals("FORBIDDEN", byTheOwner.jsonPath().getString("code"));
        assertEquals(403, byAMerchant.statusCode(), byAMerchant.asString());
        assertEquals("FORBIDDEN", byAMerchant.jsonPath().getString("code"));
        assertEquals(201, first.statusCode(), first.asString());
        assertEquals(422, otherRequestSameKey.statusCode(), otherRequestSameKey.asString());
        assertEquals("IDEMPOTENCY_KEY_REUSED", otherRequestSameKey.jsonPath().getString("code"));
    }

    /**
     * A body that does not say one settlement plainly is a 400 that records nothing, and the operation
     * stays as it was. In a body, {@code '} stands for {@code "}, and {@code {made}}, {@code {notMade}},
     * {@code {idField}} for the kind's words; {@code {othersMade}} for the other kind's success.
     */
    @ParameterizedTest(name = "{0}: {1}")
    @MethodSource("bodiesNotSayingOneSettlement")
    void aBodyThatDoesNotSayOneSettlementIsRefused(OperationKinds kind, String description, String body, String code) {
        Begun operation = kind.begin();
        long id = overdue(operation, Fault.ERROR_BEFORE_CHARGE);
        OperationKinds other = Arrays.stream(OperationKinds.values()).filter(candidate -> candidate != kind).findFirst().orElseThrow();
        String json = body.replace('\'', '"').replace("{made}", kind.made()).replace("{notMade}", kind.notMade())
                .replace("{idField}", kind.idField()).replace("{othersMade}", other.made());

        Response refused = operation.settle(Tokens.ops(), id, Api.newKey(), json);

        assertEquals(400, refused.statusCode(), refused.asString());
        assertEquals(code, refused.jsonPath().getString("code"), refused.asString());
        assertNothingSettled(operation, id);
    }

    static Stream<Arguments> bodiesNotSayingOneSettlement() {
        return forEachKind(
                Arguments.of("the other kind's outcome", "{'outcome':'{othersMade}','reason':'r'}", "MALFORMED_REQUEST"),
                Arguments.of("made without the processor's object", "{'outcome':'{made}','reason':'r'}", "VALIDATION_FAILED"),
                Arguments.of("not made naming a processor's object", "{'outcome':'{notMade}','{idField}':'x_1','reason':'r'}", "VALIDATION_FAILED"),
                Arguments.of("no reason", "{'outcome':'{notMade}'}", "VALIDATION_FAILED"),
                Arguments.of("a reason with a line break", "{'outcome':'{notMade}','reason':'a\\nb'}", "VALIDATION_FAILED"));
    }

    /**
     * Six operators at once, each under a key of their own, name the object the processor finds only
     * by its id, or, where that leaves it provable (a refund's), every other one says nothing was made:
     * one settles the operation. The test holds the row a settlement locks first until all six, each
     * having found the operation unsettled, wait for it, so that the compare-and-set decides and not
     * the first read.
     */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void concurrentSettlementsOfOneOperationSettleItOnce(OperationKinds kind) throws Exception {
        Begun operation = kind.begin();
        long id = overdue(operation, Fault.ERROR_BEFORE_CHARGE);
        String found = operation.foundOnlyById();
        List<Callable<Response>> operators = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            Map<String, String> claim = i % 2 == 1 && operation.notMadeProvenBesideAnObjectFoundOnlyById() ? notMade(kind) : made(kind, found);
            operators.add(() -> operation.settle(Tokens.ops(), id, Api.newKey(), claim));
        }

        Lock first = operation.lockedFirst(id);
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdUntil(db, first.table(), first.row(), release);
        ExecutorService background = Executors.newSingleThreadExecutor();
        List<Response> answers;
        try {
            Future<List<Response>> settling = background.submit(() -> Concurrently.run(operators));
            assertEquals(6, LockWaits.awaitWaiting(db, first.table(), first.row(), first.statement(), 6),
                    "set-up: the six settlements found the operation unsettled and wait for its first lock together");
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
        boolean made = kind.made().equals(settled.get(0).jsonPath().getString("outcome"));
        assertEquals(made ? operation.succeeded() : operation.before(), operation.orderNow(db));
        assertEquals(1, operation.settlements(db, id));
        assertEquals(1, operation.phases(db, id).stream().filter(operation.named("SUCCEEDED", "FAILED")::contains).count());
        assertEquals(made ? 1 : 0, operation.events(db, id, operation.succeededEvent()));
        assertEquals(1, operation.events(db, id, operation.settledEvent()));
    }

    /**
     * Operators settle as made while the recovery job, whose backoff has run out, finds the same
     * object under the operation's key. The test holds the operation's row until the job's lease waits
     * for it and the four operators, having found the operation unsettled, wait behind it
     * ({@link #operatorsWaiting}): the job takes the lease first and settles the operation, once; the
     * operators' compare-and-set, on the attempts they read, refuses each of them, and none leaves an
     * audit row.
     */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void settlementsRacingTheRecoveryJobSettleTheOperationOnce(OperationKinds kind) throws Exception {
        Begun operation = kind.begin();
        long id = overdue(operation, Fault.ERROR_AFTER_CHARGE);
        String processorKey = operation.processorKey(db, id);
        String madeId = operation.idUnder(processorKey);
        // Its backoff ran out before that of any operation other tests left unsettled: the job takes the
        // longest-waiting first, a batch at a time, and this run of it must take this operation.
        db.update("UPDATE " + operation.table() + " SET busy_until = '2000-01-01' WHERE id = ?", id);
        List<Callable<Response>> operators = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            operators.add(() -> operation.settle(Tokens.ops(), id, Api.newKey(), made(kind, madeId)));
        }

        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdUntil(db, operation.table(), id, release);
        ExecutorService background = Executors.newFixedThreadPool(2);
        List<Response> answers;
        try {
            Future<Integer> recovered = background.submit(() -> recovery.recover().await().atMost(Duration.ofSeconds(30)));
            db.awaitWaitingOnRow(operation.table(), id, "UPDATE " + operation.table() + " SET busy_until = ");
            Future<List<Response>> settling = background.submit(() -> Concurrently.run(operators));
            assertEquals(4, operatorsWaiting(operation, id, 4),
                    "set-up: the four operators found the operation unsettled and wait behind the recovery job's lease");
            release.complete(null);
            answers = settling.get(30, TimeUnit.SECONDS);
            recovered.get(30, TimeUnit.SECONDS);
        } finally {
            release.complete(null); // when the set-up failed too, not after the holder's 30 s
            background.shutdown();
        }
        rowReleased.get(10, TimeUnit.SECONDS);

        answers.forEach(answer -> assertTrue(Set.of("ALREADY_SETTLED", "WORKER_HOLDS_LEASE").contains(answer.jsonPath().getString("code")),
                "the recovery job took the operation first: " + answer.asString()));
        assertEquals("SUCCEEDED", operation.phase(db, id));
        assertEquals(operation.succeeded(), operation.orderNow(db));
        assertEquals(0, operation.settlements(db, id));
        assertEquals(1, operation.phases(db, id).stream().filter("SUCCEEDED"::equals).count());
        assertEquals(1, operation.events(db, id, operation.succeededEvent()));
        assertEquals(1, operation.requestsUnder(processorKey), "nothing sent again");
    }

    /**
     * How many of {@code operators} settlements of operation {@code id}, behind a holder of its row,
     * wait, once they all do: where a settlement locks its compare-and-set's row first (a payment's),
     * all of them there; else the first to take its first lock (a refund's order) waits on the
     * compare-and-set, and the others wait for that lock.
     */
    private long operatorsWaiting(Begun operation, long id, int operators) {
        Lock first = operation.lockedFirst(id);
        Lock compareAndSet = operation.compareAndSet(id);
        if (first.equals(compareAndSet)) {
            return LockWaits.awaitWaiting(db, first.table(), first.row(), first.statement(), operators);
        }
        return LockWaits.awaitWaiting(db, compareAndSet.table(), compareAndSet.row(), compareAndSet.statement(), 1)
                + LockWaits.awaitWaiting(db, first.table(), first.row(), first.statement(), operators - 1);
    }

    /** As {@link #lost}, its first send then moved back two hours: past resend-within (1 h) and any lease. */
    private long overdue(Begun operation, Fault fault) {
        long id = lost(operation, fault);
        db.update("UPDATE " + operation.table() + " SET first_sent_at = first_sent_at - INTERVAL 2 HOUR WHERE id = ?", id);
        return id;
    }

    /** The operation's request, whose answer the processor's {@code fault} lost: 202, UNKNOWN; the operation's id. */
    private long lost(Begun operation, Fault fault) {
        operation.failNext(fault);
        Response accepted = operation.send();
        assertEquals(202, accepted.statusCode(), accepted.asString());
        return operation.id(accepted);
    }

    /** Each of {@code rows} for every kind, the kind first. */
    private static Stream<Arguments> forEachKind(Arguments... rows) {
        return Arrays.stream(OperationKinds.values()).flatMap(kind -> Arrays.stream(rows)
                .map(row -> Arguments.of(Stream.concat(Stream.of(kind), Arrays.stream(row.get())).toArray())));
    }

    private static Map<String, String> notMade(OperationKinds kind) {
        return Map.of("outcome", kind.notMade(), "reason", NOTHING_SHOWN);
    }

    private static Map<String, String> made(OperationKinds kind, String processorId) {
        return Map.of("outcome", kind.made(), kind.idField(), processorId, "reason", shows(processorId));
    }

    /** The operator's reason: what the dashboard shows, the id cut to fit the reason's 500 characters. */
    private static String shows(String processorId) {
        return "the processor's dashboard shows " + (processorId.length() > 400 ? processorId.substring(0, 400) : processorId);
    }

    /** A failed operation's phase in the kind's words: DECLINED, FAILED. */
    private static String failed(Begun operation) {
        return operation.named("FAILED").get(0);
    }

    private long leased(Begun operation, long id) {
        return db.count("SELECT COUNT(*) FROM " + operation.table() + " WHERE id = ? AND leased_until > NOW(6)", id);
    }

    /** A worker's step that ends with the outcome unknown, as {@code worker} holds the operation. */
    private <O extends Operation<O>> void markUnknown(OperationKind<O, ?, ?> lifecycleKind, O worker) {
        OperationRows<O> rows = lifecycleKind.rows;
        pool.withTransaction(tx -> rows.markUnknown(tx, worker, Duration.ofMillis(500), Duration.ofSeconds(2), false)).await().atMost(WAIT);
    }

    private OperationKind<?, ?, ?> lifecycleKindOf(OperationKinds kind) {
        String made = kind == OperationKinds.CHARGE ? "charge" : "refund";
        return kinds.stream().filter(candidate -> candidate.words.made().equals(made)).findFirst().orElseThrow();
    }

    /**
     * The audit row, the settlement's one event, and the operation as ops read it, say who settled it,
     * under which key, as what ({@code processorId}: the object named, null for none), and why.
     */
    private void assertAudited(Begun operation, long id, String operator, String key, String outcome, String processorId, Response settled) {
        assertAudited(operation, id, operator, key, outcome, processorId, processorId == null ? NOTHING_SHOWN : shows(processorId), settled);
    }

    /** As above, the audit row showing the object as {@code processorId} and the operator's {@code reason}. */
    private void assertAudited(Begun operation, long id, String operator, String key, String outcome, String processorId, String reason,
                               Response settled) {
        assertEquals(String.join("|", operator, key, outcome, processorId == null ? "-" : processorId, reason), operation.audited(db, id));
        String ref = Long.toString(id);
        assertEquals(outcome, db.string("SELECT JSON_VALUE(payload, '$.outcome') FROM outbox_event WHERE event_type = ? AND ref_id = ?",
                operation.settledEvent(), ref));
        assertEquals("card", db.string("SELECT JSON_VALUE(payload, '$.method') FROM outbox_event WHERE event_type = ? AND ref_id = ?",
                operation.settledEvent(), ref));
        assertEquals(1, operation.events(db, id, operation.settledEvent()));
        Response shown = operation.shownToOps(id);
        assertEquals(200, shown.statusCode(), shown.asString());
        assertEquals(outcome, shown.jsonPath().getString("settlement.outcome"), shown.asString());
        assertEquals(processorId, shown.jsonPath().getString("settlement." + operation.kind().idField()));
        assertEquals(operator, shown.jsonPath().getString("settlement.settledBy"));
        assertEquals(reason, shown.jsonPath().getString("settlement.reason"));
        assertEquals(settled.jsonPath().getString("processorSaid"), shown.jsonPath().getString("settlement.processorSaid"));
        assertNotNull(shown.jsonPath().getString("settlement.at"));
    }

    private static void assertRefused(Response answer, String code) {
        assertEquals(409, answer.statusCode(), answer.asString());
        assertEquals(code, answer.jsonPath().getString("code"), answer.asString());
    }

    /** A refusal left the operation as it was: UNKNOWN, what it holds of its order held, no audit row, no event. */
    private void assertNothingSettled(Begun operation, long id) {
        assertEquals("UNKNOWN", operation.phase(db, id));
        assertEquals(operation.whileUnknown(), operation.orderNow(db));
        assertEquals(0, operation.settlements(db, id));
        assertEquals(0, operation.anyEvents(db, id));
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
