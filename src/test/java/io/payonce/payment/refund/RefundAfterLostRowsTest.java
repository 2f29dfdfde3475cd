package io.payonce.payment.refund;

import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.PausedRecoveryJob;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A client retries a refund to the card after the database lost what it had recorded of it: restored
 * from a backup taken after the payment and before the refund. The refund's processor key is derived
 * from the request and the charge, so the retry meets the processor's first refund under it: the card
 * is refunded once. The recovery job is paused, so that the retry alone meets the refund.
 */
@QuarkusTest
@PausedRecoveryJob
class RefundAfterLostRowsTest {

    private static final String OPS = Tokens.ops();

    private final Database db = Database.forTests();

    @AfterEach
    void resumeIt() {
        processor().heal();
    }

    @Test
    void aRetryAfterTheDatabaseWasRestoredToBeforeTheRefundMeetsTheFirstRefundAndRefundsTheCardOnce() {
        long order = Buyer.withBalance(0).paidByCard(1800, "tok_visa");
        String charge = db.string("SELECT processor_charge_id FROM pay_record WHERE order_id = ? AND phase = 'SUCCEEDED'", order);
        String key = Api.newKey();
        String backup = db.backUpOrder(order);
        processor().failNextRefundOf(order, Fault.ERROR_AFTER_CHARGE);

        Response lost = Api.refund(OPS, order, key, "r-1", 900);
        db.restore(backup);

        assertEquals(202, lost.statusCode(), lost.asString());
        assertEquals(1, refundsOf(charge), "the processor refunded the card, and payonce never heard so");
        assertEquals(0, db.count("SELECT COUNT(*) FROM refund_record WHERE order_id = ?", order), "the restored database holds no refund");
        assertEquals(0, db.refundedAmount(order));

        Response retry = Await.until(() -> Api.refund(OPS, order, key, "r-1", 900), answer -> answer.statusCode() != 202,
                Duration.ofSeconds(10), "a definite answer to the retry of the refund of order " + order);

        assertEquals(201, retry.statusCode(), retry.asString());
        assertEquals(1, refundsOf(charge), "the retry met the first refund and made none");
        Response refund = Api.as(OPS).get("/refunds/" + retry.jsonPath().getLong("refundId"));
        assertEquals(processor().refundUnder(refund.jsonPath().getString("processorKey")).id(), refund.jsonPath().getString("processorRefundId"),
                "the refund recorded the first refund");
        assertEquals(900, db.refundedAmount(order));
    }

    private static long refundsOf(String charge) {
        return processor().refunds().stream().filter(made -> made.charge().equals(charge) && made.succeeded()).count();
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
