package io.payonce.payment.card;

import io.payonce.payment.operation.RecoveryJob;
import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.Meters;
import io.quarkus.scheduler.Scheduler;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A processor that refuses payonce's calls before handling them (401 or 403: the API key is wrong, as
 * after a key rotation gone wrong; 404 or 405 to a charge: the address is) charged nothing. The
 * payment waits, UNKNOWN, with its resend window not started, each refusal is counted for the alert
 * PayonceProcessorRefusesPayonce, and once the processor is put right the recovery job charges the
 * card once. The recovery job is paused while the processor refuses, so that the payment is seen as
 * the refused send left it.
 */
@QuarkusTest
class CardProcessorRefusalTest {

    private final Database db = Database.forTests();

    @Inject
    Scheduler scheduler;

    @Inject
    Meters meters;

    @AfterEach
    void heal() {
        processor().heal();
        scheduler.resume(RecoveryJob.IDENTITY);
    }

    @ParameterizedTest
    @ValueSource(ints = {401, 403, 404, 405})
    void aChargeTheProcessorRefusedBeforeHandlingItIsNotSentAndIsCounted(int status) {
        Checkout buyer = Buyer.withBalance(0).checkout(1100);
        double refusedBefore = refused(status);
        scheduler.pause(RecoveryJob.IDENTITY);
        processor().refuseEveryCall(status);

        Response refused = buyer.payByCard("tok_visa");

        assertEquals(202, refused.statusCode(), refused.asString());
        long payment = refused.jsonPath().getLong("paymentId");
        assertEquals("UNKNOWN", db.paymentPhase(payment));
        assertEquals(0, db.count("SELECT COUNT(*) FROM pay_record WHERE id = ? AND first_sent_at IS NOT NULL", payment),
                "nothing was charged: the resend window has not started");
        assertEquals("the processor refused payonce's call (" + status + ") and charged nothing",
                db.string("SELECT detail FROM payment_phase WHERE payment_id = ? AND phase = 'UNKNOWN'", payment));
        // At least this call's: a recovery run already under way, or a refund's, may meet the refusal too.
        assertTrue(refused(status) >= refusedBefore + 1, "the refusal is counted, by its status");
        assertEquals(0, chargesOf(buyer));

        processor().heal();
        scheduler.resume(RecoveryJob.IDENTITY);
        Response settled = Await.until(() -> {
                    db.endBackoffOfPayment(payment);
                    return Api.as(buyer.bearer()).get("/payments/" + payment);
                },
                read -> "SUCCEEDED".equals(read.jsonPath().getString("phase")), Duration.ofSeconds(20), "payment " + payment + " SUCCEEDED");

        assertEquals(List.of("STARTED", "CHARGE_SENT", "UNKNOWN", "SUCCEEDED"), settled.jsonPath().getList("history.phase"));
        assertEquals(1, chargesOf(buyer));
        assertEquals("PAID", db.orderStatus(buyer.order()));
    }

    private double refused(int status) {
        return meters.count("payonce.processor.refused", "status", Integer.toString(status));
    }

    private static long chargesOf(Checkout buyer) {
        return processor().charges().stream().filter(charge -> charge.reference().equals("order-" + buyer.order())).count();
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
