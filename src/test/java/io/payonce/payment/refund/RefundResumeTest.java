package io.payonce.payment.refund;

import io.payonce.processor.ProcessorSimulator.Fault;
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

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * A client's retry sends a refund to the card again under its key only within the resend window,
 * which a send that may have reached the processor opens however many sends before it could not
 * connect (that a retry resumes the refund at all is proven for every kind by
 * {@code RetryResumesTest}). The recovery job is paused here, so that the retry alone acts on the refund.
 */
@QuarkusTest
@PausedRecoveryJob
class RefundResumeTest {

    private static final String OPS = Tokens.ops();

    private final Database db = Database.forTests();

    @AfterEach
    void resumeIt() {
        processor().heal();
        processor().up();
    }

    /**
     * The processor holds no refund under the key and the first send is older than the resend window:
     * the processor may have forgotten the key, and a resend could refund the card a second time, so
     * the refund stays UNKNOWN for an operator.
     */
    @Test
    void aRefundTheProcessorCannotFindIsNotSentAgainPastTheResendWindow() {
        long order = Buyer.withBalance(0).paidByCard(800, "tok_visa");
        String key = Api.newKey();
        processor().failNextRefundOf(order, Fault.ERROR_BEFORE_CHARGE);
        long refund = Api.refund(OPS, order, key, "r-1", 800).jsonPath().getLong("refundId");

        sentLongAgo(refund);
        Response retry = Api.refund(OPS, order, key, "r-1", 800);

        assertEquals(202, retry.statusCode(), retry.asString());
        assertEquals("UNKNOWN", details(refund).jsonPath().getString("phase"));
        assertEquals(1, processor().refundRequestsUnder(processorKey(refund)), "looked up, never sent again");
        assertEquals(800, db.refundedAmount(order), "still reserved: it may have been refunded");
    }

    /**
     * A first send that could not connect opens no window; the resend that follows may reach the
     * processor and opens it, so that a refund the processor then cannot find is not sent a third
     * time once the window has passed.
     */
    @Test
    void aResendAfterARefusedConnectionOpensTheResendWindow() {
        long order = Buyer.withBalance(0).paidByCard(600, "tok_visa");
        String key = Api.newKey();
        processor().down();
        long refund = Api.refund(OPS, order, key, "r-1", 600).jsonPath().getLong("refundId");
        assertNull(db.string("SELECT first_sent_at FROM refund_record WHERE id = ?", refund), "nothing reached the processor");
        processor().up();
        processor().failNextRefundOf(order, Fault.ERROR_BEFORE_CHARGE);

        leaseRunOut(refund);
        Response resent = Api.refund(OPS, order, key, "r-1", 600);
        sentLongAgo(refund);
        Response retry = Api.refund(OPS, order, key, "r-1", 600);

        assertEquals(202, resent.statusCode(), resent.asString());
        assertEquals(202, retry.statusCode(), retry.asString());
        assertEquals(1, processor().refundRequestsUnder(processorKey(refund)), "the resend reached the processor; nothing after it");
        assertEquals("UNKNOWN", details(refund).jsonPath().getString("phase"));
    }

    /** The refund's first send went out past the resend window, and no worker holds it. */
    private void sentLongAgo(long refund) {
        assertEquals(1, db.update("UPDATE refund_record SET first_sent_at = NOW(6) - INTERVAL 2 HOUR, busy_until = NOW(6) - INTERVAL 1 SECOND "
                + "WHERE id = ? AND phase = 'UNKNOWN' AND first_sent_at IS NOT NULL", refund));
    }

    private void leaseRunOut(long refund) {
        assertEquals(1, db.update("UPDATE refund_record SET busy_until = NOW(6) - INTERVAL 1 SECOND WHERE id = ?", refund));
    }

    private static Response details(long refund) {
        return Api.as(OPS).get("/refunds/" + refund);
    }

    private static String processorKey(long refund) {
        return details(refund).jsonPath().getString("processorKey");
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
