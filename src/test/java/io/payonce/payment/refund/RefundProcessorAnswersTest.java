package io.payonce.payment.refund;

import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.PausedRecoveryJob;
import io.payonce.support.Api;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * What payonce makes of the processor's answers to a refund beyond the plain ones: a refund under the
 * refund's key that is not this refund (another amount, another charge) settles nothing, and a call
 * the processor refused before handling it (a wrong API key or address) refunded nothing and opens no
 * resend window. The recovery job is paused, so that each step is the one the test takes.
 */
@QuarkusTest
@PausedRecoveryJob
class RefundProcessorAnswersTest {

    private static final String OPS = Tokens.ops();

    private final Database db = Database.forTests();

    @AfterEach
    void resumeIt() {
        processor().heal();
    }

    @Test
    void aRefundOfAnotherAmountUnderTheKeyLeavesTheRefundUnknown() {
        long order = Buyer.withBalance(0).paidByCard(3000, "tok_visa");
        processor().plantRefundUnderNextKey(chargeOf(order), 2999, "EUR", true);

        Response answer = Api.refund(OPS, order, Api.newKey(), "r-1", 3000);

        assertSettledNothing(answer, order, 3000);
    }

    @Test
    void aRefundOfAnotherChargeUnderTheKeyLeavesTheRefundUnknown() {
        long other = Buyer.withBalance(0).paidByCard(3100, "tok_visa");
        long order = Buyer.withBalance(0).paidByCard(3100, "tok_visa");
        processor().plantRefundUnderNextKey(chargeOf(other), 3100, "EUR", true);

        Response answer = Api.refund(OPS, order, Api.newKey(), "r-1", 3100);

        assertSettledNothing(answer, order, 3100);
    }

    /** A failure of another charge's refund under the key must not give this refund's amount back: the card may have been refunded. */
    @Test
    void aFailedRefundOfAnotherChargeUnderTheKeyLeavesTheRefundUnknownAndItsAmountHeld() {
        long other = Buyer.withBalance(0).paidByCard(3150, "tok_visa");
        long order = Buyer.withBalance(0).paidByCard(3150, "tok_visa");
        processor().plantRefundUnderNextKey(chargeOf(other), 3150, "EUR", false);

        Response answer = Api.refund(OPS, order, Api.newKey(), "r-1", 3150);

        assertSettledNothing(answer, order, 3150);
    }

    /**
     * The processor answers this refund, and a retry's lookup, with a refund of its charge and amount,
     * succeeded or failed, whose id another refund recorded already (a processor's bug, or two of its
     * ids alike once kept): not this refund's, so it stays UNKNOWN for an operator, answered 202, never
     * a 500; the other refund keeps its own.
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void aRefundAlreadyRecordedOnAnotherRefundLeavesTheRefundUnknown(boolean succeeded) {
        long settledOrder = Buyer.withBalance(0).paidByCard(3300, "tok_visa");
        Response settled = Api.refund(OPS, settledOrder, Api.newKey(), "r-1", 3300);
        assertEquals(201, settled.statusCode(), settled.asString());
        long settledRefund = settled.jsonPath().getLong("refundId");
        String recorded = db.processorRefundIdOf(settledRefund);
        long order = Buyer.withBalance(0).paidByCard(3300, "tok_visa");
        String key = Api.newKey();
        processor().plantRefundUnderNextKey(recorded, chargeOf(order), 3300, "EUR", succeeded);

        Response answer = Api.refund(OPS, order, key, "r-1", 3300);
        assertEquals(202, answer.statusCode(), answer.asString());
        long refund = answer.jsonPath().getLong("refundId");
        db.update("UPDATE refund_record SET busy_until = NOW(6) - INTERVAL 1 SECOND WHERE id = ?", refund);
        Response retried = Api.refund(OPS, order, key, "r-1", 3300);

        assertSettledNothing(answer, order, 3300, "the processor reported a refund already recorded on another refund");
        assertEquals(202, retried.statusCode(), retried.asString());
        assertEquals("UNKNOWN", db.refundPhase(refund));
        assertNull(db.processorRefundIdOf(refund));
        assertEquals(2, db.count("SELECT attempts FROM refund_record WHERE id = ?", refund), "the retry took the refund and looked it up");
        assertEquals("SUCCEEDED", db.refundPhase(settledRefund));
        assertEquals(recorded, db.processorRefundIdOf(settledRefund));
    }

    /**
     * Two of the processor's refund ids differ only in a character payonce cannot keep ({@code re/zz…}
     * and {@code re_zz…}). Reduced, the first refund would hold the second's id, and the second, its own
     * refund made, would be taken for one already recorded and left UNKNOWN. An id payonce cannot keep
     * exactly is not kept: the first refund succeeds without one, the second keeps its own.
     */
    @Test
    void aRefundIdPayonceCannotKeepExactlyIsNeverKept() {
        String kept = "re_zz" + UUID.randomUUID().toString().replace("-", "");
        long firstOrder = Buyer.withBalance(0).paidByCard(3400, "tok_visa");
        long secondOrder = Buyer.withBalance(0).paidByCard(3400, "tok_visa");
        processor().plantRefundUnderNextKey(kept.replace("re_", "re/"), chargeOf(firstOrder), 3400, "EUR", true);
        Response first = Api.refund(OPS, firstOrder, Api.newKey(), "r-1", 3400);
        processor().plantRefundUnderNextKey(kept, chargeOf(secondOrder), 3400, "EUR", true);
        Response second = Api.refund(OPS, secondOrder, Api.newKey(), "r-1", 3400);

        assertEquals(201, first.statusCode(), first.asString());
        assertEquals(201, second.statusCode(), second.asString());
        assertNull(db.string("SELECT processor_refund_id FROM refund_record WHERE order_id = ?", firstOrder));
        assertEquals(kept, db.string("SELECT processor_refund_id FROM refund_record WHERE order_id = ?", secondOrder));
    }

    /**
     * 401 and 403: the processor refuses payonce's API key; 404 and 405 to the refund's POST: the
     * address is wrong. The refund was never made: its window does not start, and once the processor
     * takes payonce's calls again a retry refunds the card once.
     */
    @ParameterizedTest
    @ValueSource(ints = {401, 403, 404, 405})
    void aRefusedCallRefundedNothingAndARetryRefundsOnceTheProcessorTakesCallsAgain(int status) {
        long order = Buyer.withBalance(0).paidByCard(3200, "tok_visa");
        String key = Api.newKey();
        processor().refuseEveryCall(status);

        Response refused = Api.refund(OPS, order, key, "r-1", 3200);
        long refund = refused.jsonPath().getLong("refundId");

        assertEquals(202, refused.statusCode(), refused.asString());
        assertNull(db.string("SELECT first_sent_at FROM refund_record WHERE id = ?", refund), "nothing reached the processor");
        processor().heal();
        db.update("UPDATE refund_record SET busy_until = NOW(6) - INTERVAL 1 SECOND WHERE id = ?", refund);
        Response retried = Api.refund(OPS, order, key, "r-1", 3200);
        assertEquals(201, retried.statusCode(), retried.asString());
        assertEquals(1, processor().refunds().stream().filter(made -> made.charge().equals(chargeOf(order))).count());
    }

    /** The refund stays UNKNOWN with its amount reserved and no event, for an operator: the card may or may not have been refunded. */
    private void assertSettledNothing(Response answer, long order, long amount) {
        assertSettledNothing(answer, order, amount, "the processor reported another refund under this key");
    }

    /** As {@link #assertSettledNothing(Response, long, long)}, the refund's history saying {@code detail}. */
    private void assertSettledNothing(Response answer, long order, long amount, String detail) {
        assertEquals(202, answer.statusCode(), answer.asString());
        long refund = answer.jsonPath().getLong("refundId");
        assertEquals("UNKNOWN", db.refundPhase(refund));
        assertEquals(detail, db.string("SELECT detail FROM refund_phase WHERE refund_id = ? AND phase = 'UNKNOWN'", refund));
        assertEquals(amount, db.refundedAmount(order), "still reserved");
        assertEquals(0, db.count("SELECT COUNT(*) FROM outbox_event WHERE event_type = 'refund.created' AND ref_id = ?", Long.toString(refund)));
    }

    private String chargeOf(long order) {
        return db.string("SELECT processor_charge_id FROM pay_record WHERE order_id = ? AND phase = 'SUCCEEDED'", order);
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
