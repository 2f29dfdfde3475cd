package io.payonce.payment.refund;

import io.payonce.payment.operation.Lifecycle;
import io.payonce.processor.Processor;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.processor.RefundOutcome;
import io.payonce.processor.RefundRequest;
import io.payonce.support.PausedRecoveryJob;
import io.payonce.support.Api;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The resend window of a refund to the card (payonce.processor.resend-within, 1 h here) holds as a
 * card payment's does: it starts at the first send that may have reached the processor, a stale
 * worker's late word cannot close it again, and a resend is judged by it as the database sees it when
 * the resend would be made. Past it, a processor that has forgotten the key would take a resend for a
 * second refund of the card. Hours pass here by moving the send's recorded time back, and the
 * processor's key retention by forgetting its keys; the recovery job is paused, so that each step is
 * the one the test takes. Each refund is half its payment, so that a second one would succeed.
 */
@QuarkusTest
@PausedRecoveryJob
class RefundResendWindowTest {

    private static final String OPS = Tokens.ops();

    private final Database db = Database.forTests();

    @Inject
    Pool pool;

    @Inject
    CardRefundRepository cardRefunds;

    @Inject
    RefundToCard toCard;

    @Inject
    Lifecycle lifecycle;

    @Inject
    CardRefundSettlement settlement;

    @Inject
    Processor processorClient;

    @AfterEach
    void resumeIt() {
        processor().heal();
        processor().up();
    }

    /**
     * The first send could not connect, so the window had not started; the resend reached the
     * processor, which refunded the card, and its answer was lost. Hours later the processor has
     * forgotten the key: payonce sends nothing more, and the refund waits, UNKNOWN, for an operator.
     */
    @Test
    void aResendAfterARefusedConnectStartsTheWindowThatStopsAResendPastIt() {
        long order = Buyer.withBalance(0).paidByCard(2000, "tok_visa");
        String key = Api.newKey();
        processor().down();
        Response refused = Api.refund(OPS, order, key, "r-1", 1000);
        processor().up();
        long refund = refused.jsonPath().getLong("refundId");
        assertEquals(202, refused.statusCode(), refused.asString());
        assertFalse(windowStarted(refund), "nothing reached the processor");

        processor().failNextRefundOf(order, Fault.ERROR_AFTER_CHARGE);
        Response resent = resumeNow(order, key, refund);
        assertEquals(202, resent.statusCode(), resent.asString());
        assertEquals(1, refundsOf(refund), "the resend refunded the card, and its answer was lost");

        Response later = hoursLaterResumeNow(order, key, refund);

        assertEquals(202, later.statusCode(), later.asString());
        assertEquals(1, refundsOf(refund), "nothing was sent past the window");
        assertEquals("UNKNOWN", db.refundPhase(refund));
    }

    /**
     * Worker A took the refund over and its send could not connect; it stalled before recording so,
     * past its lease. Worker B took over and its resend reached the processor, which refunded the card
     * and lost the answer. A's late record that its send never connected must not close the window
     * B's resend started.
     */
    @Test
    void aStaleWorkersRefusedSendRecordedLateDoesNotReopenTheWindow() {
        long order = Buyer.withBalance(0).paidByCard(2200, "tok_visa");
        String key = Api.newKey();
        processor().down();
        long refund = Api.refund(OPS, order, key, "r-1", 1100).jsonPath().getLong("refundId");
        CardRefund workerA = takeOver(order);
        RefundOutcome notConnected = processorClient.refund(workerA.processorKey(),
                new RefundRequest(workerA.chargeId(), workerA.amount(), workerA.currency(), workerA.reference()))
                .await().atMost(Duration.ofSeconds(10));
        assertFalse(((RefundOutcome.Unknown) notConnected).delivered(), "worker A's send could not connect: " + notConnected);

        processor().up();
        processor().failNextRefundOf(order, Fault.ERROR_AFTER_CHARGE);
        Response workerB = resumeNow(order, key, refund);
        assertEquals(202, workerB.statusCode(), workerB.asString());
        assertEquals(1, refundsOf(refund), "worker B's resend refunded the card, and its answer was lost");
        settlement.settle(workerA, notConnected).await().atMost(Duration.ofSeconds(10));

        assertTrue(windowStarted(refund), "B's resend started the window, whatever A recorded after");
        Response later = hoursLaterResumeNow(order, key, refund);
        assertEquals(202, later.statusCode(), later.asString());
        assertEquals(1, refundsOf(refund), "nothing was sent past the window");
    }

    /**
     * The recovery job read the refund while its first send was recent, and came to it later in its
     * batch, hours on in the extreme, after the processor forgot the key: the resend is judged by the
     * window as it stands when it would be made, and nothing is sent.
     */
    @Test
    void aResendDecidedOnAnAgedReadingOfTheWindowSendsNothing() {
        long order = Buyer.withBalance(0).paidByCard(2400, "tok_visa");
        String key = Api.newKey();
        processor().failNextRefundOf(order, Fault.ERROR_AFTER_CHARGE);
        Response lost = Api.refund(OPS, order, key, "r-1", 1200);
        long refund = lost.jsonPath().getLong("refundId");
        assertEquals(202, lost.statusCode(), lost.asString());
        CardRefund worker = takeOver(order);

        db.update("UPDATE refund_record SET first_sent_at = first_sent_at - INTERVAL 2 HOUR WHERE id = ?", refund);
        processor().retainKeysFor(Duration.ZERO);
        lifecycle.advance(toCard, worker).await().atMost(Duration.ofSeconds(10));

        assertEquals(1, refundsOf(refund), "nothing was sent past the window");
    }

    /** Another worker's view of the refund, once the first worker's lease ran out: it reads the refund and takes its lease. */
    private CardRefund takeOver(long order) {
        db.update("UPDATE refund_record SET busy_until = NOW(6) - INTERVAL 1 SECOND WHERE order_id = ? AND refund_no = 'r-1'", order);
        CardRefund read = cardRefunds.findByOrderAndNo(pool, order, "r-1").await().atMost(Duration.ofSeconds(10));
        assertTrue(cardRefunds.takeLease(pool, read, lifecycle.lease()).await().atMost(Duration.ofSeconds(10)), "the worker took the refund over");
        return read.nextAttempt();
    }

    /** A retry of the client once the refund's lease or backoff has passed: it takes the refund over and resumes it. */
    private Response resumeNow(long order, String key, long refund) {
        db.update("UPDATE refund_record SET busy_until = NOW(6) - INTERVAL 1 SECOND WHERE id = ?", refund);
        return Api.refund(OPS, order, key, "r-1", amountOf(refund));
    }

    /** Two hours pass, beyond the resend window, and the processor forgets its keys; then the client retries. */
    private Response hoursLaterResumeNow(long order, String key, long refund) {
        db.update("UPDATE refund_record SET first_sent_at = first_sent_at - INTERVAL 2 HOUR WHERE id = ?", refund);
        processor().retainKeysFor(Duration.ZERO);
        return resumeNow(order, key, refund);
    }

    private boolean windowStarted(long refund) {
        return db.count("SELECT COUNT(*) FROM refund_record WHERE id = ? AND first_sent_at IS NOT NULL", refund) == 1;
    }

    private long amountOf(long refund) {
        return db.count("SELECT amount FROM refund_record WHERE id = ?", refund);
    }

    /** The refunds the processor made of the refund's charge, under any key, forgotten or not. */
    private long refundsOf(long refund) {
        String charge = db.string("SELECT processor_charge_id FROM refund_record WHERE id = ?", refund);
        return processor().refunds().stream().filter(made -> made.charge().equals(charge) && made.succeeded()).count();
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
