package io.payonce.tracing;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.payonce.support.Api;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.payonce.support.StartedSpans;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.jboss.logmanager.ExtHandler;
import org.jboss.logmanager.ExtLogRecord;
import org.jboss.logmanager.Logger;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Tracing as production runs it by default, with nothing exported: no span is recorded, and every
 * request still has a trace id, the gateway's when it sent a {@code traceparent}, in its problem
 * bodies and log lines. {@link ExportedSpansTest} reads the spans when export is on.
 */
@QuarkusTest
class TracingTest {

    @Inject
    StartedSpans started;

    @Inject
    OpenTelemetry openTelemetry;

    @Test
    void withNothingExportedNoSpanIsRecordedWhileProblemsStillCarryTheTraceId() {
        Checkout pay = Buyer.named("trace-" + UUID.randomUUID(), 100).checkout(1200);
        Traceparent gateway = Traceparent.random();

        Response refused = gateway.pay(pay);
        Response untraced = Api.pay(pay.bearer(), pay.order(), UUID.randomUUID().toString());

        assertEquals(402, refused.statusCode(), refused.asString());
        assertEquals(402, untraced.statusCode(), untraced.asString());
        assertEquals(gateway.traceId(), refused.jsonPath().getString("traceId"));
        String ownTrace = untraced.jsonPath().getString("traceId");
        assertTrue(ownTrace != null && ownTrace.matches("[0-9a-f]{32}"), untraced.asString());
        assertFalse(started.anyOf(gateway.traceId()), "no span of the pay (request, statements, Redis commands) is recorded");
        assertFalse(started.anyOf(ownTrace), "no span of a trace payonce starts is recorded");
        Sampler sampler = ((OpenTelemetrySdk) openTelemetry).getSdkTracerProvider().getSampler();
        assertTrue(sampler.getDescription().contains("AlwaysOffSampler"), sampler.getDescription());
    }

    @Test
    void withNothingExportedAPayOpensNoSpanForItsStatementsOrRedisCommands() {
        Checkout pay = Buyer.named("trace-" + UUID.randomUUID(), 10_000).checkout(1200);
        Response paid;
        OpenedSpans opened = OpenedSpans.count();
        try {
            paid = Traceparent.random().pay(pay);
        } finally {
            opened.close();
        }

        assertEquals(201, paid.statusCode(), paid.asString());
        assertTrue(opened.received() >= 1, "the request still has its span, whose ids its logs and problems carry");
        assertEquals(0, opened.sent(), "no span is opened around a SQL statement or a Redis command");
    }

    @Test
    void aProblemCarriesTheTraceIdOfItsRequest() {
        String bearer = Tokens.user("trace-" + UUID.randomUUID());
        Traceparent gateway = Traceparent.random();

        Response missingKey = Api.as(bearer).header("traceparent", gateway.header()).post("/orders/1/pay");
        Response untraced = Api.as(bearer).post("/orders/1/pay");

        assertEquals(400, missingKey.statusCode(), missingKey.asString());
        assertEquals(gateway.traceId(), missingKey.jsonPath().getString("traceId"));
        String ownTrace = untraced.jsonPath().getString("traceId");
        assertTrue(ownTrace != null && ownTrace.matches("[0-9a-f]{32}") && !ownTrace.equals(gateway.traceId()),
                "a request without traceparent starts a trace of its own: " + untraced.asString());
    }

    @Test
    void everyLineWrittenForAKeyedRequestNamesItsOperationKeyTargetCallerAndTrace() throws Exception {
        Checkout pay = Buyer.named("trace-" + UUID.randomUUID(), 100).checkout(1200);
        Traceparent gateway = Traceparent.random();
        Captured lines = Captured.from("io.payonce");
        try {
            Response refused = gateway.pay(pay);
            assertEquals(402, refused.statusCode(), refused.asString());
        } finally {
            lines.close();
        }

        List<ExtLogRecord> ofThisPay = lines.records().stream()
                .filter(record -> gateway.traceId().equals(record.getMdc("traceId"))).toList();
        assertFalse(ofThisPay.isEmpty(), "the refusal is logged at INFO with the request's trace id");
        for (ExtLogRecord record : ofThisPay) {
            Map<String, String> mdc = record.getMdcCopy();
            assertEquals("pay", mdc.get(RequestTags.OPERATION), record.getMessage());
            assertEquals(pay.key(), mdc.get(RequestTags.KEY));
            assertEquals("order:" + pay.order(), mdc.get(RequestTags.TARGET));
            assertEquals(pay.userId(), mdc.get(RequestTags.CALLER));
            assertFalse(mdc.values().stream().anyMatch(value -> value.contains(pay.bearer())), "no MDC field holds the token");
        }
    }

    /** The log records written under a logger while it is open, whatever the console's level. */
    private static final class Captured extends ExtHandler implements AutoCloseable {

        private final Logger logger;
        private final List<ExtLogRecord> records = new ArrayList<>();

        private Captured(Logger logger) {
            this.logger = logger;
        }

        static Captured from(String category) {
            Captured captured = new Captured(Logger.getLogger(category));
            captured.logger.addHandler(captured);
            return captured;
        }

        @Override
        protected synchronized void doPublish(ExtLogRecord record) {
            record.copyMdc();
            records.add(record);
        }

        synchronized List<ExtLogRecord> records() {
            return List.copyOf(records);
        }

        @Override
        public void close() {
            logger.removeHandler(this);
        }
    }
}
