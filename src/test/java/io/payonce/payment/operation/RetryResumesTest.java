package io.payonce.payment.operation;

import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Await;
import io.payonce.support.OperationKinds;
import io.payonce.support.OperationKinds.Begun;
import io.payonce.support.PausedRecoveryJob;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * A client's retry resumes an operation at the processor from its last committed phase, for every
 * kind: a send whose answer was lost leaves it UNKNOWN, and the retry under the same key looks it up,
 * finds nothing made, sends it again under the same processor key and settles it. The recovery job is
 * paused here, so that the retry alone can have settled it: in the application (and in the *IT
 * tests) the job and the retry race for the lease, and either may win.
 */
@QuarkusTest
@PausedRecoveryJob
class RetryResumesTest {

    @AfterEach
    void resumeIt() {
        ProcessorSimulatorResource.simulator().heal();
    }

    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void aRetryWithTheSameKeyResumesAnUnknownOperationAndMakesItOnce(OperationKinds kind) {
        Begun operation = kind.begin();
        operation.failNext(Fault.ERROR_BEFORE_CHARGE);

        Response accepted = operation.send();
        long id = operation.id(accepted);
        Response resumed = Await.until(operation::send, answer -> answer.statusCode() != 202, Duration.ofSeconds(10),
                "a retry that settled " + kind + " " + id);

        assertEquals(202, accepted.statusCode(), accepted.asString());
        assertEquals(201, resumed.statusCode(), resumed.asString());
        assertNull(resumed.header("Idempotent-Replayed"), "the retry settled it itself");
        assertEquals(id, operation.id(resumed));
        assertEquals(operation.named("STARTED", "SENT", "UNKNOWN", "SUCCEEDED"), operation.history(resumed));
        String processorKey = operation.shown(resumed).jsonPath().getString("processorKey");
        assertEquals(1, operation.madeUnder(processorKey));
        assertEquals(2, operation.requestsUnder(processorKey), "the failed send and its resend, under one key");
        Response replay = operation.send();
        assertEquals("true", replay.header("Idempotent-Replayed"));
        assertEquals(resumed.asString(), replay.asString());
    }
}
