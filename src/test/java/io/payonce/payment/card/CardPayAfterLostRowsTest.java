package io.payonce.payment.card;

import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.PausedRecoveryJob;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A client retries a card pay after the database lost its key's record, deleted by retention while
 * the payment stayed. (A database restored to before the pay is a lifecycle property, proven for
 * every kind by {@code AfterLostRowsTest}.)
 */
@QuarkusTest
@PausedRecoveryJob
class CardPayAfterLostRowsTest {

    private final Database db = Database.forTests();

    @AfterEach
    void resumeIt() {
        processor().heal();
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

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
