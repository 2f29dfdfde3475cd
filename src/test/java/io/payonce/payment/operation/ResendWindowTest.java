package io.payonce.payment.operation;

import io.payonce.processor.ProcessorOutcome;
import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Database;
import io.payonce.support.OperationKinds;
import io.payonce.support.OperationKinds.Begun;
import io.payonce.support.PausedRecoveryJob;
import io.quarkus.arc.All;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The resend window (payonce.processor.resend-within, 1 h here), for every kind: it starts at the
 * first send that may have reached the processor, whatever went before it and whichever worker made
 * it; a stale worker's late word cannot close it again; and a resend is judged by it as the database
 * sees it when the resend would be made. Past it, a processor that has forgotten the key would take a
 * resend for a second charge or refund. Hours pass here by moving the send's recorded time back, and
 * the processor's key retention by forgetting its keys; the recovery job is paused, so that each step
 * is the one the test takes. Workers are driven through the lifecycle's own hooks ({@link OperationKind}).
 */
@QuarkusTest
@PausedRecoveryJob
class ResendWindowTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    private final Database db = Database.forTests();

    @Inject
    Pool pool;

    @Inject
    Lifecycle lifecycle;

    @Inject
    @All
    List<OperationKind<?, ?, ?>> kinds;

    @AfterEach
    void resumeIt() {
        processor().heal();
        processor().up();
    }

    /**
     * The first send could not connect, so the window had not started; the resend reached the
     * processor, which made it, and its answer was lost. Hours later the processor has forgotten the
     * key: payonce sends nothing more, and the operation waits, UNKNOWN, for an operator.
     */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void aResendAfterARefusedConnectStartsTheWindowThatStopsAResendPastIt(OperationKinds kind) {
        Begun operation = kind.begin();
        processor().down();
        Response refused = operation.send();
        processor().up();
        long id = operation.id(refused);

        assertEquals(202, refused.statusCode(), refused.asString());
        assertFalse(windowStarted(operation, id), "nothing reached the processor");
        operation.failNext(Fault.ERROR_AFTER_CHARGE);
        Response resent = resumeNow(operation, id);
        assertEquals(202, resent.statusCode(), resent.asString());
        assertEquals(1, operation.madeAtProcessor(), "the resend made it, and its answer was lost");

        Response later = hoursLaterResumeNow(operation, id);

        assertEquals(202, later.statusCode(), later.asString());
        assertEquals(1, operation.madeAtProcessor(), "nothing was sent past the window");
        assertEquals("UNKNOWN", operation.phase(db, id));
    }

    /**
     * Worker A took the operation over and its send could not connect; it stalled before recording
     * so, past its lease. Worker B took over and its resend reached the processor, which made it and
     * lost the answer. A's late record that its send never connected must not restart the window B's
     * resend started.
     */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void aStaleWorkersRefusedSendRecordedLateDoesNotReopenTheWindow(OperationKinds kind) {
        staleWorker(lifecycleKindOf(kind), kind.begin());
    }

    private <O extends Operation<O>, R extends ProcessorOutcome> void staleWorker(OperationKind<O, R, ?> lifecycleKind, Begun operation) {
        processor().down();
        long id = operation.id(operation.send());
        O workerA = takeOver(lifecycleKind, operation, id);
        R notConnected = lifecycleKind.send(workerA).await().atMost(WAIT);
        assertFalse(notConnected.delivered(), "worker A's send could not connect: " + notConnected);

        processor().up();
        operation.failNext(Fault.ERROR_AFTER_CHARGE);
        Response workerB = resumeNow(operation, id);
        assertEquals(202, workerB.statusCode(), workerB.asString());
        assertEquals(1, operation.madeAtProcessor(), "worker B's resend made it, and its answer was lost");
        lifecycleKind.settle(workerA, notConnected).await().atMost(WAIT);

        assertTrue(windowStarted(operation, id), "B's resend started the window, whatever A recorded after");
        Response later = hoursLaterResumeNow(operation, id);
        assertEquals(202, later.statusCode(), later.asString());
        assertEquals(1, operation.madeAtProcessor(), "nothing was sent past the window");
    }

    /**
     * The recovery job read the operation while its first send was recent, and came to it later in
     * its batch, hours on in the extreme, after the processor forgot the key: the resend is judged by
     * the window as it stands when it would be made, and nothing is sent.
     */
    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void aResendDecidedOnAnAgedReadingOfTheWindowSendsNothing(OperationKinds kind) {
        agedReading(lifecycleKindOf(kind), kind.begin());
    }

    private <O extends Operation<O>, R extends ProcessorOutcome> void agedReading(OperationKind<O, R, ?> lifecycleKind, Begun operation) {
        operation.failNext(Fault.ERROR_AFTER_CHARGE);
        Response lost = operation.send();
        long id = operation.id(lost);
        assertEquals(202, lost.statusCode(), lost.asString());
        O worker = takeOver(lifecycleKind, operation, id);

        db.update("UPDATE " + operation.table() + " SET first_sent_at = first_sent_at - INTERVAL 2 HOUR WHERE id = ?", id);
        processor().retainKeysFor(Duration.ZERO);
        lifecycle.advance(lifecycleKind, worker).await().atMost(WAIT);

        assertEquals(1, operation.madeAtProcessor(), "nothing was sent past the window");
    }

    /** Another worker's view of the operation once its lease ran out: it finds it unattended and takes its lease, one more attempt. */
    private <O extends Operation<O>> O takeOver(OperationKind<O, ?, ?> lifecycleKind, Begun operation, long id) {
        expireLease(operation, id);
        O read = lifecycleKind.rows.findUnattended(pool, 100_000).await().atMost(WAIT).stream()
                .filter(unattended -> unattended.id() == id).findFirst().orElseThrow();
        assertTrue(lifecycleKind.rows.takeLease(pool, read, lifecycle.lease()).await().atMost(WAIT), "the worker took it over");
        return read.nextAttempt();
    }

    /** A retry of the client once the operation's lease or backoff has passed: it takes the operation over and resumes it. */
    private Response resumeNow(Begun operation, long id) {
        expireLease(operation, id);
        return operation.send();
    }

    /** Two hours pass, beyond the resend window, and the processor forgets its keys; then the client retries. */
    private Response hoursLaterResumeNow(Begun operation, long id) {
        db.update("UPDATE " + operation.table() + " SET first_sent_at = first_sent_at - INTERVAL 2 HOUR WHERE id = ?", id);
        processor().retainKeysFor(Duration.ZERO);
        return resumeNow(operation, id);
    }

    private void expireLease(Begun operation, long id) {
        db.update("UPDATE " + operation.table() + " SET busy_until = NOW(6) - INTERVAL 1 SECOND WHERE id = ?", id);
    }

    private boolean windowStarted(Begun operation, long id) {
        return db.count("SELECT COUNT(*) FROM " + operation.table() + " WHERE id = ? AND first_sent_at IS NOT NULL", id) == 1;
    }

    private OperationKind<?, ?, ?> lifecycleKindOf(OperationKinds kind) {
        String made = kind == OperationKinds.CHARGE ? "charge" : "refund";
        return kinds.stream().filter(candidate -> candidate.words.made().equals(made)).findFirst().orElseThrow();
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
