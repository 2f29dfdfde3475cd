package io.payonce.payment.card;

import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Await;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.HangingClient;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.common.http.TestHTTPResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.URL;
import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A card pay whose client hangs up while the processor is still answering goes on to its outcome,
 * and its answer is counted as every keyed write's is: once, when final, whether or not anyone is
 * left to read it.
 */
@QuarkusTest
@WithTestResource(value = ProcessorSimulatorResource.class, scope = TestResourceScope.GLOBAL)
@ExtendWith(LedgerInvariants.class)
class CardPayDisconnectTest {

    private static final String REQUESTS = "payonce.requests";
    private static final String BODY = "{\"method\":\"card\",\"cardToken\":\"tok_visa\"}";

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    @TestHTTPResource("/")
    URL service;

    @AfterEach
    void heal() {
        ProcessorSimulatorResource.simulator().heal();
    }

    @Test
    void aCardPayWhoseClientHungUpIsChargedSettledAndCountedOnce() throws Exception {
        Buyer.Checkout checkout = Buyer.withBalance(0).checkout(700);
        String bearer = checkout.bearer();
        long order = checkout.order();
        String key = checkout.key();
        double executedBefore = executed();
        ProcessorSimulatorResource.simulator().failNextChargeOf(order, Fault.SLOW);

        HangingClient.payAndHangUp(service, bearer, order, key, BODY, 100);
        awaitPaid(order);
        awaitCount(executedBefore + 1);

        assertEquals(executedBefore + 1, executed(), "the abandoned card pay's answer was counted once");
        Response retry = checkout.payByCard("tok_visa");
        assertEquals(201, retry.statusCode(), retry.asString());
        assertEquals("true", retry.header("Idempotent-Replayed"));
    }

    private double executed() {
        return meters.count(REQUESTS, "operation", "pay", "outcome", "executed");
    }

    /** Within the processor's recovery bound: a charge whose answer the cold client missed is settled by the recovery job. */
    private void awaitPaid(long order) {
        Await.until(() -> "PAID".equals(db.orderStatus(order)), Duration.ofSeconds(20), "the abandoned card pay to go on to its outcome");
    }

    private void awaitCount(double expected) {
        Await.until(() -> executed() >= expected, Duration.ofSeconds(1), "the abandoned card pay's answer to be counted");
    }
}
