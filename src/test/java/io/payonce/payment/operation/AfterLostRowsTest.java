package io.payonce.payment.operation;

import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Await;
import io.payonce.support.Database;
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

/**
 * A client retries an operation at the processor after the database lost what it had recorded of
 * it: restored from a backup taken before the request. The operation's processor key is derived from
 * the request (and, for a refund, the charge), so the retry meets the processor's first object under
 * it: the card is charged, or refunded, once. Run for every kind; the recovery job is paused, so that
 * the retry alone meets the first object.
 */
@QuarkusTest
@PausedRecoveryJob
class AfterLostRowsTest {

    private final Database db = Database.forTests();

    @AfterEach
    void resumeIt() {
        ProcessorSimulatorResource.simulator().heal();
    }

    @ParameterizedTest
    @EnumSource(OperationKinds.class)
    void aRetryAfterTheDatabaseWasRestoredToBeforeTheRequestMeetsTheFirstObjectAndMakesNoOther(OperationKinds kind) {
        Begun operation = kind.begin();
        String backup = db.backUpOrder(operation.order());
        operation.failNext(Fault.ERROR_AFTER_CHARGE);

        Response lost = operation.send();
        db.restore(backup);

        assertEquals(202, lost.statusCode(), lost.asString());
        assertEquals(1, operation.madeAtProcessor(), "the processor made it, and payonce never heard so");
        assertEquals(0, operation.rows(db), "the restored database holds none of it");
        assertEquals(operation.before(), operation.orderNow(db));

        Response retry = Await.until(operation::send, answer -> answer.statusCode() != 202, Duration.ofSeconds(10),
                "a definite answer to the retry on order " + operation.order());

        assertEquals(201, retry.statusCode(), retry.asString());
        assertEquals("SUCCEEDED", retry.jsonPath().getString("phase"));
        assertEquals(1, operation.madeAtProcessor(), "the retry met the first and made none");
        Response shown = operation.shown(retry);
        assertEquals(operation.madeUnder(shown), operation.recorded(shown), "the first is the one recorded");
        assertEquals(operation.succeeded(), operation.orderNow(db));
    }
}
