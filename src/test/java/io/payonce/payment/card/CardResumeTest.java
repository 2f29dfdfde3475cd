package io.payonce.payment.card;

import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.PausedRecoveryJob;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * A client's retry resumes a card payment from its last committed phase. The recovery job is paused
 * here, so that the retry alone can have settled it: in the application (and in CardPayIT) the job
 * and the retry race for the payment's lease, and either may win.
 */
@QuarkusTest
@PausedRecoveryJob
class CardResumeTest {

    @AfterEach
    void resumeIt() {
        ProcessorSimulatorResource.simulator().heal();
    }

    @Test
    void aRetryWithTheSameKeyResumesAnUnknownPaymentAndChargesTheCardOnce() throws Exception {
        ProcessorSimulator processor = ProcessorSimulatorResource.simulator();
        Checkout checkout = Buyer.withBalance(0).checkout(1500);
        processor.failNextChargeOf(checkout.order(), Fault.ERROR_BEFORE_CHARGE);

        Response accepted = checkout.payByCard("tok_visa");
        long payment = accepted.jsonPath().getLong("paymentId");
        Response resumed = Await.until(() -> checkout.payByCard("tok_visa"), answer -> answer.statusCode() != 202, Duration.ofSeconds(10),
                "a retry that settled payment " + payment);

        assertEquals(202, accepted.statusCode(), accepted.asString());
        assertEquals(201, resumed.statusCode(), resumed.asString());
        assertNull(resumed.header("Idempotent-Replayed"), "the retry settled the payment itself");
        assertEquals(payment, resumed.jsonPath().getLong("paymentId"));
        String processorKey = Api.as(checkout.bearer()).get("/payments/" + payment).jsonPath().getString("processorKey");
        assertEquals(1, processor.charges().stream().filter(charge -> charge.key().equals(processorKey)).count());
        List<String> phases = Api.as(checkout.bearer()).get("/payments/" + payment).jsonPath().getList("history.phase");
        assertEquals(List.of("STARTED", "CHARGE_SENT", "UNKNOWN", "SUCCEEDED"), phases);
        Response replay = checkout.payByCard("tok_visa");
        assertEquals("true", replay.header("Idempotent-Replayed"));
        assertEquals(resumed.asString(), replay.asString());
    }
}
