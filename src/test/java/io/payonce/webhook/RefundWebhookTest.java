package io.payonce.webhook;

import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Api;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.PausedRecoveryJob;
import io.payonce.support.Tokens;
import io.payonce.support.Webhooks;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The processor's refund events as only a refund meets them, against the real database and the
 * processor simulator: a refund's reservation of the order's amount, given back by a failure's event
 * and taken for good by a success's, which makes the order REFUNDED once its refunds reach its
 * amount. What a refund's events share with a charge's (an event settles an operation once, a
 * repeat, a contradiction, an unknown key, a forgery) is proven for every kind in
 * {@link WebhookSettlesOnceTest}. The recovery job is paused, so that whatever settles a refund here
 * is a webhook.
 */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@ExtendWith(LedgerInvariants.class)
@PausedRecoveryJob
class RefundWebhookTest {

    private static final String OPS = Tokens.ops();

    private final Database db = Database.forTests();

    @AfterEach
    void resumeIt() {
        processor().heal();
    }

    /**
     * The processor answered 500 before it refunded, and its event later says the refund failed: the
     * amount it held is refundable again, so a new refund of the whole order is taken; once that one's
     * event says it succeeded, the order, refunded in full by the one refund that stands, is REFUNDED.
     */
    @Test
    void aFailedRefundsAmountIsRefundableAgainAndTheEventThatRefundsTheWholeOrderMakesItRefunded() {
        long order = Buyer.withBalance(0).paidByCard(1000, "tok_visa");
        processor().failNextRefundOf(order, Fault.ERROR_BEFORE_CHARGE);
        Response accepted = Api.refund(OPS, order, Api.newKey(), "r-1", 1000);
        assertEquals(202, accepted.statusCode(), accepted.asString());
        assertEquals(1000, db.refundedAmount(order), "held while the refund is unknown");
        JsonObject failed = refundObject(accepted.jsonPath().getLong("refundId")).put("status", "failed").put("failure_code", "processing_error");

        Response failure = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "refund.failed", failed));
        long heldAfterFailure = db.refundedAmount(order);
        processor().failNextRefundOf(order, Fault.ERROR_AFTER_CHARGE);
        Response again = Api.refund(OPS, order, Api.newKey(), "r-2", 1000);
        long refund = again.jsonPath().getLong("refundId");
        Response success = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "refund.succeeded", refundObject(refund)));

        assertEquals("APPLIED", failure.jsonPath().getString("outcome"), failure.asString());
        assertEquals(0, heldAfterFailure, "the reservation is given back");
        assertEquals(202, again.statusCode(), again.asString());
        assertEquals("APPLIED", success.jsonPath().getString("outcome"), success.asString());
        assertEquals("SUCCEEDED", db.refundPhase(refund));
        assertEquals(1000, db.refundedAmount(order));
        assertEquals("REFUNDED", db.orderStatus(order), "refunded in full once its one refund that stands succeeded");
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

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
