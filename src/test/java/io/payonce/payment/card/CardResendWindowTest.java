package io.payonce.payment.card;

import io.payonce.idempotency.IdempotencyKey;
import io.payonce.payment.operation.Lifecycle;
import io.payonce.processor.ChargeOutcome;
import io.payonce.processor.ChargeRequest;
import io.payonce.processor.Processor;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.PausedRecoveryJob;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
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
 * The resend window (payonce.processor.resend-within, 1 h here) starts at the first send that may
 * have reached the processor, whatever went before it and whichever worker made it: past the window,
 * a processor that has forgotten the key would take a resend for a new charge. Hours pass here by
 * moving the send's recorded time back, and the processor's key retention by forgetting its keys;
 * the recovery job is paused, so that each step is the one the test takes.
 */
@QuarkusTest
@PausedRecoveryJob
class CardResendWindowTest {

    private final Database db = Database.forTests();

    @Inject
    Pool pool;

    @Inject
    CardPaymentRepository cards;

    @Inject
    CardCharge charge;

    @Inject
    Lifecycle lifecycle;

    @Inject
    CardSettlement settlement;

    @Inject
    Processor processorClient;

    @AfterEach
    void resumeIt() {
        processor().heal();
        processor().up();
    }

    /**
     * The first send could not connect, so the window had not started; the resend reached the
     * processor, which charged the card, and its answer was lost. Hours later the processor has
     * forgotten the key: payonce sends nothing more, and the payment waits, UNKNOWN, for an operator.
     */
    @Test
    void aResendAfterARefusedConnectStartsTheWindowThatStopsAResendPastIt() {
        Checkout buyer = Buyer.withBalance(0).checkout(1300);
        processor().down();
        Response refused = buyer.payByCard("tok_visa");
        processor().up();
        long payment = refused.jsonPath().getLong("paymentId");

        assertEquals(202, refused.statusCode(), refused.asString());
        assertFalse(windowStarted(payment), "nothing reached the processor");
        processor().failNextChargeOf(buyer.order(), Fault.ERROR_AFTER_CHARGE);
        Response resent = resumeNow(buyer, payment);
        assertEquals(202, resent.statusCode(), resent.asString());
        assertEquals(1, chargesOf(buyer), "the resend charged the card, and its answer was lost");

        Response later = hoursLaterResumeNow(buyer, payment);

        assertEquals(202, later.statusCode(), later.asString());
        assertEquals(1, chargesOf(buyer), "nothing was sent past the window");
        assertEquals("UNKNOWN", db.paymentPhase(payment));
    }

    /**
     * Worker A took the payment over and its send could not connect; it stalled before recording
     * so, past its lease. Worker B took over and its resend reached the processor, which charged the
     * card and lost the answer. A's late record that its send never connected must not restart the
     * window B's resend started.
     */
    @Test
    void aStaleWorkersRefusedSendRecordedLateDoesNotReopenTheWindow() {
        Checkout buyer = Buyer.withBalance(0).checkout(1400);
        processor().down();
        Response refused = buyer.payByCard("tok_visa");
        long payment = refused.jsonPath().getLong("paymentId");
        expireLease(payment);
        CardPayment workerA = takeLease(read(buyer));
        ChargeOutcome notConnected = processorClient.charge(workerA.processorKey(), new ChargeRequest(workerA.amount(),
                workerA.currency(), workerA.cardToken(), workerA.reference())).await().atMost(Duration.ofSeconds(10));
        assertEquals(new ChargeOutcome.Unknown("could not connect", false), notConnected);

        processor().up();
        processor().failNextChargeOf(buyer.order(), Fault.ERROR_AFTER_CHARGE);
        Response workerB = resumeNow(buyer, payment);
        assertEquals(202, workerB.statusCode(), workerB.asString());
        assertEquals(1, chargesOf(buyer), "worker B's resend charged the card, and its answer was lost");
        settlement.settle(workerA, notConnected).await().atMost(Duration.ofSeconds(10));

        assertTrue(windowStarted(payment), "B's resend started the window, whatever A recorded after");
        Response later = hoursLaterResumeNow(buyer, payment);
        assertEquals(202, later.statusCode(), later.asString());
        assertEquals(1, chargesOf(buyer), "nothing was sent past the window");
    }

    /**
     * The recovery job read the payment while its first send was recent, and came to it later in
     * its batch, hours on in the extreme, after the processor forgot the key: the resend is judged
     * by the window as it stands when it would be made, and nothing is sent.
     */
    @Test
    void aResendDecidedOnAnAgedReadingOfTheWindowSendsNothing() {
        Checkout buyer = Buyer.withBalance(0).checkout(1500);
        processor().failNextChargeOf(buyer.order(), Fault.ERROR_AFTER_CHARGE);
        Response lost = buyer.payByCard("tok_visa");
        long payment = lost.jsonPath().getLong("paymentId");
        assertEquals(202, lost.statusCode(), lost.asString());
        expireLease(payment);
        CardPayment worker = takeLease(read(buyer));

        db.update("UPDATE pay_record SET first_sent_at = first_sent_at - INTERVAL 2 HOUR WHERE id = ?", payment);
        processor().retainKeysFor(Duration.ZERO);
        lifecycle.advance(charge, worker).await().atMost(Duration.ofSeconds(10));

        assertEquals(1, chargesOf(buyer), "nothing was sent past the window");
    }

    /** Another worker takes the payment's lease as it read it, and holds it as that worker would: one more attempt. */
    private CardPayment takeLease(CardPayment read) {
        assertTrue(cards.takeLease(pool, read, lifecycle.lease()).await().atMost(Duration.ofSeconds(10)), "the worker took the payment over");
        return read.nextAttempt();
    }

    /** A retry of the client once the payment's backoff has passed: it takes the payment over and resumes it. */
    private Response resumeNow(Checkout buyer, long payment) {
        expireLease(payment);
        return buyer.payByCard("tok_visa");
    }

    /** Two hours pass, beyond the resend window, and the processor forgets its keys; then the client retries. */
    private Response hoursLaterResumeNow(Checkout buyer, long payment) {
        db.update("UPDATE pay_record SET first_sent_at = first_sent_at - INTERVAL 2 HOUR WHERE id = ?", payment);
        processor().retainKeysFor(Duration.ZERO);
        return resumeNow(buyer, payment);
    }

    private void expireLease(long payment) {
        db.update("UPDATE pay_record SET busy_until = NOW(6) - INTERVAL 1 SECOND WHERE id = ?", payment);
    }

    private boolean windowStarted(long payment) {
        return db.count("SELECT COUNT(*) FROM pay_record WHERE id = ? AND first_sent_at IS NOT NULL", payment) == 1;
    }

    private CardPayment read(Checkout buyer) {
        return cards.findByOrderAndKey(pool, buyer.order(), new IdempotencyKey(buyer.key())).await().atMost(Duration.ofSeconds(10));
    }

    private static long chargesOf(Checkout buyer) {
        return processor().charges().stream().filter(charge -> charge.reference().equals("order-" + buyer.order())).count();
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
