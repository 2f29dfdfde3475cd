package io.payonce.payment.card;

import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Api;
import io.payonce.support.Tokens;
import io.quarkus.scheduler.Scheduler;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * A client's retry resumes a card payment from its last committed phase. The recovery job is paused
 * here, so that the retry alone can have settled it: in the application (and in CardPayIT) the job
 * and the retry race for the payment's lease, and either may win.
 */
@QuarkusTest
class CardResumeTest {

    @Inject
    Scheduler scheduler;

    @BeforeEach
    void pauseTheRecoveryJob() {
        scheduler.pause(CardRecoveryJob.IDENTITY);
    }

    @AfterEach
    void resumeIt() {
        ProcessorSimulatorResource.simulator().heal();
        scheduler.resume(CardRecoveryJob.IDENTITY);
    }

    @Test
    void aRetryWithTheSameKeyResumesAnUnknownPaymentAndChargesTheCardOnce() throws Exception {
        ProcessorSimulator processor = ProcessorSimulatorResource.simulator();
        String userId = Tokens.newUserId();
        Api.fundedAccount(userId, 0);
        String bearer = Tokens.user(userId);
        long order = Api.newOrder(bearer, 1500);
        String key = Api.newKey();
        processor.failNext(Fault.ERROR_BEFORE_CHARGE);

        Response accepted = pay(bearer, order, key);
        long payment = accepted.jsonPath().getLong("paymentId");
        Response resumed = accepted;
        for (int i = 0; i < 100 && resumed.statusCode() == 202; i++) {
            Thread.sleep(100);
            resumed = pay(bearer, order, key);
        }

        assertEquals(202, accepted.statusCode(), accepted.asString());
        assertEquals(201, resumed.statusCode(), resumed.asString());
        assertNull(resumed.header("Idempotent-Replayed"), "the retry settled the payment itself");
        assertEquals(payment, resumed.jsonPath().getLong("paymentId"));
        String processorKey = Api.as(bearer).get("/payments/" + payment).jsonPath().getString("processorKey");
        assertEquals(1, processor.charges().stream().filter(charge -> charge.key().equals(processorKey)).count());
        List<String> phases = Api.as(bearer).get("/payments/" + payment).jsonPath().getList("history.phase");
        assertEquals(List.of("STARTED", "CHARGE_SENT", "UNKNOWN", "SUCCEEDED"), phases);
        Response replay = pay(bearer, order, key);
        assertEquals("true", replay.header("Idempotent-Replayed"));
        assertEquals(resumed.asString(), replay.asString());
    }

    private static Response pay(String bearer, long order, String key) {
        return Api.as(bearer).header("Idempotency-Key", key).contentType(ContentType.JSON)
                .body(Map.of("method", "card", "cardToken", "tok_visa")).post("/orders/" + order + "/pay");
    }
}
