package io.payonce.webhook;

import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.processor.WebhookSender;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.OperationKinds;
import io.payonce.support.OperationKinds.Begun;
import io.payonce.support.PausedRecoveryJob;
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
 * The processor's webhooks as only a charge's events or no operation's meet them: charge.refunded,
 * which names a charge and none of its refunds, and event types payonce does not read, against the
 * real database and the processor simulator; the signature of any delivery. What a charge's events
 * share with a refund's (an event settles an operation once, a repeat, a contradiction, an unknown
 * key, a forgery) is proven for every kind in {@link WebhookSettlesOnceTest}. The recovery job is
 * paused, so that a payment left UNKNOWN here stays so.
 */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@ExtendWith(LedgerInvariants.class)
@PausedRecoveryJob
class ProcessorWebhookTest {

    private final Database db = Database.forTests();

    @AfterEach
    void resumeIt() {
        ProcessorSimulatorResource.simulator().heal();
    }

    /**
     * charge.refunded names the charge, not which of its refunds: kept, not applied (each refund is
     * settled by its own refund event, WebhookSettlesOnceTest); a type payonce does not read is kept and ignored.
     */
    @Test
    void chargeRefundedIsKeptNotAppliedAndOtherTypesIgnored() {
        Begun payment = OperationKinds.CHARGE.begin();
        payment.failNext(Fault.ERROR_AFTER_CHARGE);
        Response accepted = payment.send();
        long id = payment.id(accepted);
        JsonObject charge = payment.processorObject(db, id);
        JsonObject refunded = charge.put("refunded", true).put("amount_refunded", charge.getLong("amount"));

        Response delivered = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "charge.refunded", refunded));
        Response other = Webhooks.deliver(Webhooks.event(Webhooks.newEventId(), "customer.created", new JsonObject().put("id", "cus_1")));

        assertEquals(202, accepted.statusCode(), accepted.asString());
        assertEquals(200, delivered.statusCode(), delivered.asString());
        assertEquals("NOT_APPLIED", delivered.jsonPath().getString("outcome"));
        assertEquals("UNKNOWN", payment.phase(db, id), "a charge's refund settles no payment");
        assertEquals("IGNORED_TYPE", other.jsonPath().getString("outcome"), other.asString());
    }

    /** While the processor rolls its secret over it signs with both: a header whose second v1 matches is the processor's. */
    @Test
    void aSignatureAmongSeveralIsEnough() {
        String event = Webhooks.event(Webhooks.newEventId(), "customer.created", new JsonObject().put("id", "cus_2"));
        long now = System.currentTimeMillis() / 1000;
        String old = WebhookSender.signature("whsec_the_secret_being_replaced", now, event);
        String current = WebhookSender.signature(Webhooks.secret(), now, event);

        Response delivered = Webhooks.deliver(event, old + "," + current.substring(current.indexOf("v1=")));

        assertEquals(200, delivered.statusCode(), delivered.asString());
    }
}
