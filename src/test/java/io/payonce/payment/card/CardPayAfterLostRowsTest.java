package io.payonce.payment.card;

import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.PausedRecoveryJob;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A client retries a card pay after the database lost what it had recorded of it: restored from a
 * backup taken before the pay, or its key's record deleted by retention while the payment stayed.
 * The payment's processor key is derived from the request, so the retry meets the processor's first
 * charge under it: the card is charged once. The recovery job is paused, so that the retry alone
 * meets the charge.
 */
@QuarkusTest
@PausedRecoveryJob
class CardPayAfterLostRowsTest {

    private final Database db = Database.forTests();

    @AfterEach
    void resumeIt() {
        processor().heal();
    }

    @Test
    void aRetryAfterTheDatabaseWasRestoredToBeforeThePayMeetsTheFirstChargeAndChargesTheCardOnce() {
        Checkout buyer = Buyer.withBalance(0).checkout(1200);
        String backup = db.backUpOrder(buyer.order());
        processor().failNextChargeOf(buyer.order(), Fault.ERROR_AFTER_CHARGE);

        Response lost = buyer.payByCard("tok_visa");
        db.restore(backup);

        assertEquals(202, lost.statusCode(), lost.asString());
        assertEquals(1, chargesOf(buyer), "the processor charged the card, and payonce never heard so");
        assertEquals(0, db.payments(buyer.order()), "the restored database holds no payment of the order");
        assertEquals("UNPAID", db.orderStatus(buyer.order()));

        Response retry = Await.until(() -> buyer.payByCard("tok_visa"), answer -> answer.statusCode() != 202, Duration.ofSeconds(10),
                "a definite answer to the retry of order " + buyer.order());

        assertEquals(201, retry.statusCode(), retry.asString());
        assertEquals("SUCCEEDED", retry.jsonPath().getString("phase"));
        assertEquals(1, chargesOf(buyer), "the retry met the first charge and made none");
        Response payment = Api.as(buyer.bearer()).get("/payments/" + retry.jsonPath().getLong("paymentId"));
        assertEquals(processor().chargeUnder(payment.jsonPath().getString("processorKey")).id(), payment.jsonPath().getString("chargeId"),
                "the payment recorded the first charge");
        assertEquals("PAID", db.orderStatus(buyer.order()));
    }

    /**
     * Retention deleted the key's record of a declined pay, and the declined payment stayed: the
     * retry's processor key is already on that payment's row. It is answered the decline again, never
     * a 500, and nothing is sent.
     */
    @Test
    void aRetryOfADeclinedPayWhoseKeyRecordWasDeletedIsDeclinedAgainAndSendsNothing() {
        Checkout buyer = Buyer.withBalance(0).checkout(600);
        Response declined = buyer.payByCard("tok_decline_generic");
        long payment = declined.jsonPath().getLong("paymentId");
        String processorKey = db.processorKeyOfPayment(payment);
        db.update("DELETE FROM idempotency_record WHERE scope = ? AND idem_key = ?", buyer.userId(), buyer.key());

        Response retry = buyer.payByCard("tok_decline_generic");
        Response replay = buyer.payByCard("tok_decline_generic");

        assertEquals(402, declined.statusCode(), declined.asString());
        assertEquals(402, retry.statusCode(), retry.asString());
        assertEquals("CARD_DECLINED", retry.jsonPath().getString("code"));
        assertEquals(payment, retry.jsonPath().getLong("paymentId"), "the payment the key made");
        assertEquals("card_declined", retry.jsonPath().getString("declineCode"));
        assertEquals("true", replay.header("Idempotent-Replayed"), "the decline is the key's answer again");
        assertEquals(1, processor().chargeRequestsUnder(processorKey), "nothing was sent again");
        assertEquals(1, db.payments(buyer.order()));
        assertEquals("UNPAID", db.orderStatus(buyer.order()), "the order is payable with another key");
    }

    private static long chargesOf(Checkout buyer) {
        return processor().charges().stream().filter(charge -> charge.reference().equals("order-" + buyer.order())).count();
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
