package io.payonce.tracing;

import io.opentelemetry.api.OpenTelemetry;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.payonce.support.RecentSpans;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.jboss.logmanager.ExtHandler;
import org.jboss.logmanager.ExtLogRecord;
import org.jboss.logmanager.Logger;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

@QuarkusTest
class TracingTest {

    private static final AttributeKey<String> KEY = AttributeKey.stringKey("payonce.idempotency_key");

    @Inject
    RecentSpans exported;

    @Inject
    OpenTelemetry openTelemetry;

    @Test
    void aPayContinuesTheGatewaysTraceWithItsStatementsAndRedisCommandsAndNamesItsKey() {
        Checkout pay = aPay(5000, 1200);
        String userId = pay.userId();
        String bearer = pay.bearer();
        long order = pay.order();
        String key = pay.key();
        Traceparent gateway = Traceparent.random();

        Response paid = sendWithin(pay, gateway);

        assertEquals(201, paid.statusCode(), paid.asString());
        List<SpanData> spans = spansOf(gateway.traceId(), all -> all.stream().anyMatch(TracingTest::isDatabase)
                && all.stream().anyMatch(TracingTest::isRedis) && all.stream().anyMatch(span -> span.getKind() == SpanKind.SERVER));
        SpanData server = spans.stream().filter(span -> span.getKind() == SpanKind.SERVER).findFirst().orElseThrow();
        assertEquals(gateway.parentSpanId(), server.getParentSpanId(), "the server span is a child of the gateway's");
        assertEquals(key, server.getAttributes().get(KEY));
        assertEquals("pay", server.getAttributes().get(AttributeKey.stringKey("payonce.operation")));
        assertEquals("order:" + order, server.getAttributes().get(AttributeKey.stringKey("payonce.target")));
        assertEquals(userId, server.getAttributes().get(AttributeKey.stringKey("enduser.id")));
        assertTrue(spans.stream().filter(TracingTest::isDatabase).count() >= 5,
                "the pay's statements are spans of its trace: " + names(spans));
        assertFalse(spans.stream().anyMatch(span -> span.getAttributes().asMap().values().stream()
                .anyMatch(value -> String.valueOf(value).contains(bearer))), "no span holds the bearer token");
    }

    @Test
    void noSpanOfAnOrderSubmittedWithATokenHoldsTheTokenOrTheBearer() {
        String bearer = Buyer.named("trace-" + UUID.randomUUID(), 1000).bearer();
        String token = Api.submitToken(bearer);
        Traceparent gateway = Traceparent.random();

        Response created = Api.as(bearer).header("traceparent", gateway.header()).header("Submit-Token", token)
                .contentType("application/json").body("{\"orderSn\":\"sn-" + UUID.randomUUID() + "\",\"amount\":1500,\"currency\":\"EUR\"}")
                .post("/orders");

        assertEquals(201, created.statusCode(), created.asString());
        List<SpanData> spans = spansOf(gateway.traceId(), all -> all.stream().anyMatch(TracingTest::isRedis)
                && all.stream().anyMatch(TracingTest::isDatabase) && all.stream().anyMatch(span -> span.getKind() == SpanKind.SERVER));
        for (String secret : List.of(token, bearer)) {
            assertFalse(spans.stream().anyMatch(span -> span.getAttributes().asMap().values().stream()
                    .anyMatch(value -> String.valueOf(value).contains(secret))), "no span holds " + secret + ": " + names(spans));
        }
    }

    /** A trace the gateway sampled is recorded; of those payonce starts, the share PAYONCE_TRACES_SAMPLED (1 here). */
    @Test
    void traceSamplingFollowsTheGatewayAndOtherwiseTheConfiguredShare() {
        Sampler sampler = ((OpenTelemetrySdk) openTelemetry).getSdkTracerProvider().getSampler();

        assertTrue(sampler.getDescription().contains("ParentBased{root:TraceIdRatioBased{1.000000}"), sampler.getDescription());
    }

    @Test
    void aRetryOnAnotherTraceIsFoundByItsKey() {
        Checkout pay = aPay(5000, 700);
        String key = pay.key();
        Traceparent first = Traceparent.random();
        Traceparent retry = Traceparent.random();

        sendWithin(pay, first);
        Response replayed = sendWithin(pay, retry);

        assertEquals("true", replayed.header("Idempotent-Replayed"));
        for (Traceparent attempt : List.of(first, retry)) {
            List<SpanData> spans = spansOf(attempt.traceId(), all -> all.stream().anyMatch(span -> key.equals(span.getAttributes().get(KEY))));
            assertTrue(spans.stream().anyMatch(span -> span.getKind() == SpanKind.SERVER && key.equals(span.getAttributes().get(KEY))));
        }
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
        Checkout pay = aPay(100, 1200);
        Traceparent gateway = Traceparent.random();
        Captured lines = Captured.from("io.payonce");
        try {
            Response refused = sendWithin(pay, gateway);
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

    private List<SpanData> spansOf(String traceId, Predicate<List<SpanData>> complete) {
        return Await.until(() -> exported.ofTrace(traceId), complete, Duration.ofSeconds(10), "the whole trace " + traceId);
    }

    private static boolean isDatabase(SpanData span) {
        return span.getKind() == SpanKind.CLIENT && span.getAttributes().asMap().keySet().stream()
                .anyMatch(key -> key.getKey().startsWith("db.") && !"redis".equals(span.getAttributes().get(AttributeKey.stringKey("db.system"))));
    }

    private static boolean isRedis(SpanData span) {
        return span.getKind() == SpanKind.CLIENT && "redis".equals(span.getAttributes().get(AttributeKey.stringKey("db.system")));
    }

    private static List<String> names(List<SpanData> spans) {
        return spans.stream().map(span -> span.getKind() + " " + span.getName() + " " + span.getAttributes()).toList();
    }

    /** A pay ready to send: a new user's funded account, an order of theirs and a key. */
    private static Checkout aPay(long balance, long amount) {
        return Buyer.named("trace-" + UUID.randomUUID(), balance).checkout(amount);
    }

    /** Sends the pay as part of the gateway's trace. */
    private static Response sendWithin(Checkout pay, Traceparent gateway) {
        return Api.as(pay.bearer()).header("traceparent", gateway.header()).header("Idempotency-Key", pay.key())
                .post("/orders/" + pay.order() + "/pay");
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
