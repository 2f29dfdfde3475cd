package io.payonce.payment.refund;

import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.PausedRecoveryJob;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A refund to the card that the processor refuses gives back what it reserved on the order, once,
 * whatever the order's other refunds have taken. The recovery job is paused, so that the refusal the
 * test plants at the processor meets this test's refund and no other.
 */
@QuarkusTest
@ExtendWith(LedgerInvariants.class)
@PausedRecoveryJob
class RefundToCardFailureTest {

    private static final String OPS = Tokens.ops();
    private static final Duration RECOVERY_BOUND = Duration.ofSeconds(20);

    private final Database db = Database.forTests();

    @AfterEach
    void resumeIt() {
        processor().heal();
    }

    /**
     * An order of 2000: a refund of 1300 succeeded, then the processor refuses one of 500. The refused
     * refund's 500 comes back to the order once, so the refunded total is 1300 again and 700 is all
     * that can still be refunded: 701 is refused before it reaches the processor, 700 goes back to the
     * card and refunds the order in full.
     *
     * <p>The refund that succeeded first is what a reservation given back twice needs to show: it
     * leaves room (1800 reserved) for a second release of 500, which RELEASE_REFUND's guard
     * {@code refunded_amount >= ?} lets through, and the total falls to 800. With nothing refunded
     * before, the second release finds too little and changes nothing, which is why
     * {@code RefundToCardTest.aFailedRefundGivesItsAmountBackAndItsNumberAnswersTheFailure} cannot see it.
     */
    @Test
    void aRefusedRefundAfterASucceededOneGivesItsReservationBackOnce() {
        long order = Buyer.withBalance(0).paidByCard(2000, "tok_visa");
        Response succeeded = refundUntilDefinite(order, Api.newKey(), "r-1", 1300);
        assertEquals(201, succeeded.statusCode(), succeeded.asString());
        assertEquals(1300, refundedTotal(order));
        processor().plantRefundUnderNextKey(chargeOf(order), 500, "EUR", false);

        Response refused = refundUntilDefinite(order, Api.newKey(), "r-2", 500);

        assertEquals(402, refused.statusCode(), "set-up: the processor refused the refund of 500: " + refused.asString());
        assertEquals("REFUND_FAILED", refused.jsonPath().getString("code"));
        assertEquals(1300, refundedTotal(order), "the refused refund's 500 given back once, and only its 500");
        Response beyond = Api.refund(OPS, order, Api.newKey(), "r-3", 701);
        assertEquals(409, beyond.statusCode(), beyond.asString());
        assertEquals("REFUND_EXCEEDS_PAYMENT", beyond.jsonPath().getString("code"));
        assertEquals(700, beyond.jsonPath().getLong("refundable"));
        assertEquals(1300, refundedTotal(order), "the refusal reserved nothing");
        Response rest = refundUntilDefinite(order, Api.newKey(), "r-4", 700);
        assertEquals(201, rest.statusCode(), "what is left is refundable to the last cent: " + rest.asString());
        assertEquals(2000, rest.jsonPath().getLong("refundedTotal"));
        assertEquals("REFUNDED", rest.jsonPath().getString("orderStatus"));
        assertEquals(2000, refundedTotal(order));
        assertEquals(2000, refundedAtProcessor(order), "the card got back the order's amount, no more");
    }

    /** The order's refunded total as stored: what its refunds to the card have taken or hold reserved. */
    private long refundedTotal(long order) {
        return db.refundedAmount(order);
    }

    private String chargeOf(long order) {
        return db.string("SELECT processor_charge_id FROM pay_record WHERE order_id = ? AND phase = 'SUCCEEDED'", order);
    }

    /** What the processor refunded of the order's charge, in all. */
    private long refundedAtProcessor(long order) {
        String charge = chargeOf(order);
        return processor().refunds().stream().filter(r -> r.charge().equals(charge) && r.succeeded())
                .mapToLong(ProcessorSimulator.Refund::amount).sum();
    }

    /**
     * Refunds as a patient client: again with the same key while told to retry later or that the
     * outcome is not known yet (a cold processor client may answer late; with the recovery job paused,
     * the retry takes the refund over once its lease has passed).
     */
    private static Response refundUntilDefinite(long order, String key, String refundNo, long amount) {
        return Await.until(() -> Api.refund(OPS, order, key, refundNo, amount),
                answer -> answer.statusCode() != 202 && answer.header("Retry-After") == null, RECOVERY_BOUND,
                "a definite answer to refund " + refundNo + " of order " + order);
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
