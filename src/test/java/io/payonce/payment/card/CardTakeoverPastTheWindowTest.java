package io.payonce.payment.card;

import io.payonce.payment.operation.RecoveryJob;
import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.PausedRecoveryJob;
import io.payonce.support.Api;
import io.payonce.support.Buyer;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Database;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * A card payment whose worker committed CHARGE_SENT and then recorded nothing more (it crashed, or
 * the database refused its record), found once its lease has run out, with its first send further
 * back than the resend window (payonce.processor.resend-within, 1 h here) and nothing under its key
 * at the processor. Whoever takes it over, the client's retry or the recovery job, must not send it
 * again (a processor that has forgotten the key would charge the card a second time), nor leave it
 * CHARGE_SENT, which no operator may settle: it becomes UNKNOWN, and an operator settles it.
 *
 * <p>What decides is the resend-window check in Java, {@code Lifecycle.resendWithinTheWindow}. The window is
 * checked again in SQL ({@code OperationRows.markResent}), so with the Java check always
 * yes nothing is sent either: the resend's compare-and-set refuses, and the worker leaves the payment
 * as it found it, CHARGE_SENT, at every takeover. {@link io.payonce.payment.operation.ResendWindowTest}'s operations are UNKNOWN
 * already when they are taken past the window, so they end UNKNOWN either way; these are CHARGE_SENT.
 * The recovery job is paused, so that each takeover is the one the test makes.
 */
@QuarkusTest
@PausedRecoveryJob
class CardTakeoverPastTheWindowTest {

    /** A trigger of the test's that refuses to let one order's payment leave CHARGE_SENT for UNKNOWN. */
    private static final String STOPPED_WORKER = "test_charge_sent_then_stopped";

    private final Database db = Database.forTests();

    @Inject
    RecoveryJob recovery;

    @AfterEach
    void healAndResume() {
        processor().heal();
    }

    /** A payment left CHARGE_SENT by a worker that stopped; {@code processorKey} is its charge's key at the processor. */
    record Abandoned(Checkout buyer, long payment, String processorKey) {
    }

    @Test
    void aRetryTakingOverAChargeSentPaymentPastTheWindowLeavesItUnknownAndChargesNothing() {
        Abandoned abandoned = abandonedPastTheWindow(1600);

        Response taken = abandoned.buyer().payByCard("tok_visa");

        assertEquals(202, taken.statusCode(), taken.asString());
        assertEquals("UNKNOWN", taken.jsonPath().getString("phase"), "the retry's answer: " + taken.asString());
        assertLeftUnknownForAnOperator(abandoned);
    }

    @Test
    void theRecoveryJobTakingOverAChargeSentPaymentPastTheWindowLeavesItUnknownAndChargesNothing() {
        Abandoned abandoned = abandonedPastTheWindow(1700);
        // Its lease ran out before that of any payment other tests left unsettled: the job takes the
        // longest-waiting first, and this run of it must take this payment.
        db.update("UPDATE pay_record SET busy_until = '2000-01-01' WHERE id = ?", abandoned.payment());

        recovery.recover().await().atMost(Duration.ofSeconds(30));

        assertLeftUnknownForAnOperator(abandoned);
    }

    /**
     * Taken over, the payment is UNKNOWN: nothing was sent past the window (the one request under its
     * key is the first send, which the processor failed before charging), its order still waits for
     * it, and an operator who finds nothing at the processor settles it as not charged.
     */
    private void assertLeftUnknownForAnOperator(Abandoned abandoned) {
        assertEquals("UNKNOWN", phase(abandoned), "taken over past the window, the payment is left to an operator, not CHARGE_SENT for ever");
        assertEquals(List.of("STARTED", "CHARGE_SENT", "UNKNOWN"), history(abandoned));
        assertEquals(1, processor().chargeRequestsUnder(abandoned.processorKey()), "nothing sent past the window");
        assertEquals(0, chargesOf(abandoned.buyer()), "nothing charged");
        assertEquals("PAYING", db.orderStatus(abandoned.buyer().order()));

        Response settled = Api.as(Tokens.ops()).header("Idempotency-Key", Api.newKey()).contentType(ContentType.JSON)
                .body(Map.of("outcome", "not_charged", "reason", "the processor's dashboard shows nothing for this order"))
                .post("/payments/" + abandoned.payment() + "/settlement");

        assertEquals(201, settled.statusCode(), settled.asString());
        assertEquals("DECLINED", settled.jsonPath().getString("phase"));
        assertEquals("DECLINED", phase(abandoned));
        assertEquals("UNPAID", db.orderStatus(abandoned.buyer().order()), "the order can be paid again, with a new key");
        assertEquals(0, chargesOf(abandoned.buyer()));
    }

    /**
     * A card pay whose worker committed CHARGE_SENT, sent the charge (which the processor failed before
     * charging: nothing under its key) and then recorded nothing more: the test's trigger refuses the
     * move to UNKNOWN, as a crash would leave it. Then two hours pass for the payment: its first send is
     * moved back beyond the window, and its lease has run out.
     */
    private Abandoned abandonedPastTheWindow(long amount) {
        Checkout buyer = Buyer.withBalance(0).checkout(amount);
        processor().failNextChargeOf(buyer.order(), Fault.ERROR_BEFORE_CHARGE);
        Response stopped;
        db.update("CREATE TRIGGER " + STOPPED_WORKER + " BEFORE UPDATE ON pay_record FOR EACH ROW IF NEW.order_id = " + buyer.order()
                + " AND NEW.phase = 'UNKNOWN' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'the worker stopped after its send'; END IF");
        try {
            stopped = buyer.payByCard("tok_visa");
        } finally {
            db.update("DROP TRIGGER IF EXISTS " + STOPPED_WORKER);
        }
        long payment = db.count("SELECT id FROM pay_record WHERE order_id = ?", buyer.order());
        Abandoned abandoned = new Abandoned(buyer, payment, db.processorKeyOfPayment(payment));
        assertEquals("CHARGE_SENT", phase(abandoned), "set-up: the worker recorded nothing after CHARGE_SENT; it answered " + stopped.asString());
        assertNull(processor().chargeUnder(abandoned.processorKey()), "set-up: nothing under the payment's key at the processor");
        db.update("UPDATE pay_record SET first_sent_at = first_sent_at - INTERVAL 2 HOUR, busy_until = NOW(6) - INTERVAL 1 SECOND, "
                + "leased_until = NOW(6) - INTERVAL 1 SECOND WHERE id = ?", payment);
        return abandoned;
    }

    private String phase(Abandoned abandoned) {
        return db.paymentPhase(abandoned.payment());
    }

    private List<String> history(Abandoned abandoned) {
        return db.paymentPhases(abandoned.payment());
    }

    private static long chargesOf(Checkout buyer) {
        return processor().charges().stream().filter(charge -> ("order-" + buyer.order()).equals(charge.reference())).count();
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
