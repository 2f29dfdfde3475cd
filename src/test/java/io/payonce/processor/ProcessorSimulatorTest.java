package io.payonce.processor;

import io.payonce.processor.ProcessorSimulator.Fault;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * A fault queued for one order is met by that order's next request, whatever arrives first: payonce's
 * recovery jobs resend other orders' charges and refunds at any moment, and they pass it by. A restart
 * names no charge or refund the last run named.
 */
class ProcessorSimulatorTest {

    private static final long ORDER = 41;
    private static final long OTHER_ORDER = 42;

    private final ProcessorSimulator processor = ProcessorSimulator.start(0);
    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @AfterEach
    void close() {
        processor.close();
    }

    @Test
    void aChargeOfAnotherOrderPassesByTheFaultQueuedForAnOrder() throws Exception {
        processor.failNextChargeOf(ORDER, Fault.ERROR_BEFORE_CHARGE);

        HttpResponse<String> other = charge(OTHER_ORDER);
        HttpResponse<String> faulted = charge(ORDER);

        assertEquals(200, other.statusCode(), other.body());
        assertEquals(500, faulted.statusCode(), faulted.body());
    }

    @Test
    void aRefundOfAnotherOrderPassesByTheFaultQueuedForAnOrder() throws Exception {
        String charge = chargeId(charge(ORDER));
        String otherCharge = chargeId(charge(OTHER_ORDER));
        processor.failNextRefundOf(ORDER, Fault.ERROR_BEFORE_CHARGE);

        HttpResponse<String> other = refund(OTHER_ORDER, otherCharge);
        HttpResponse<String> faulted = refund(ORDER, charge);

        assertEquals(200, other.statusCode(), other.body());
        assertEquals(500, faulted.statusCode(), faulted.body());
    }

    /**
     * The simulator keeps its ledger in memory, while a dev database keeps the payments that name its
     * ids: a restart that numbered from 1 again would hand the next payment a charge id a stored one
     * holds (one payment per charge), and leave it PAYING for ever. Two instances stand for two runs.
     */
    @Test
    void aRestartedSimulatorNamesNoChargeOrRefundTheLastRunNamed() throws Exception {
        String charge = chargeId(charge(processor, ORDER));
        String refund = refundId(refund(processor, ORDER, charge));
        try (ProcessorSimulator restarted = ProcessorSimulator.start(0)) {
            String chargeAfterRestart = chargeId(charge(restarted, ORDER));
            String refundAfterRestart = refundId(refund(restarted, ORDER, chargeAfterRestart));

            assertNotEquals(charge, chargeAfterRestart);
            assertNotEquals(refund, refundAfterRestart);
            // In the characters and length payonce keeps of them, so that an id is recorded as the processor said it.
            assertEquals(chargeAfterRestart, ProcessorText.of(chargeAfterRestart, ProcessorText.ID_LENGTH));
            assertEquals(refundAfterRestart, ProcessorText.of(refundAfterRestart, ProcessorText.ID_LENGTH));
        }
    }

    /** A charge of 700 EUR as payonce sends it for {@code order}. */
    private HttpResponse<String> charge(long order) throws IOException, InterruptedException {
        return charge(processor, order);
    }

    private HttpResponse<String> charge(ProcessorSimulator to, long order) throws IOException, InterruptedException {
        return post(to, "/v1/charges", "charge-of-" + order,
                new JsonObject().put("amount", 700).put("currency", "EUR").put("source", "tok_visa").put("reference", "order-" + order));
    }

    /** A refund of 300 EUR of {@code charge} as payonce sends it for {@code order}'s refund r-1. */
    private HttpResponse<String> refund(long order, String charge) throws IOException, InterruptedException {
        return refund(processor, order, charge);
    }

    private HttpResponse<String> refund(ProcessorSimulator to, long order, String charge) throws IOException, InterruptedException {
        return post(to, "/v1/refunds", "refund-of-" + order,
                new JsonObject().put("charge", charge).put("amount", 300).put("currency", "EUR").put("reference", "order-" + order + "-refund-r-1"));
    }

    private HttpResponse<String> post(ProcessorSimulator to, String path, String key, JsonObject body) throws IOException, InterruptedException {
        HttpRequest request = HttpRequest.newBuilder(URI.create(to.url() + path)).header("Idempotency-Key", key)
                .header("Content-Type", "application/json").POST(HttpRequest.BodyPublishers.ofString(body.encode())).build();
        return http.send(request, HttpResponse.BodyHandlers.ofString());
    }

    private static String chargeId(HttpResponse<String> charged) {
        assertEquals(200, charged.statusCode(), charged.body());
        return new JsonObject(charged.body()).getString("id");
    }

    private static String refundId(HttpResponse<String> refunded) {
        assertEquals(200, refunded.statusCode(), refunded.body());
        return new JsonObject(refunded.body()).getString("id");
    }
}
