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
import io.payonce.support.StartedSpans;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Export switched on: the spans are recorded, sampled as Quarkus's sampler decides, and read here
 * from {@link RecentSpans}, a span exporter of the tests' that Quarkus uses instead of its OTLP one
 * ({@code OtlpExportIT} checks that one against a collector).
 */
@QuarkusTest
@TestProfile(ExportedSpansTest.Exported.class)
class ExportedSpansTest {

    private static final AttributeKey<String> KEY = AttributeKey.stringKey("payonce.idempotency_key");

    @Inject
    RecentSpans exported;

    @Inject
    StartedSpans started;

    @Inject
    OpenTelemetry openTelemetry;

    public static final class Exported implements QuarkusTestProfile {

        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("payonce.tracing.exporter", "otlp");
        }
    }

    @Test
    void aPayContinuesTheGatewaysTraceWithItsStatementsAndRedisCommandsAndNamesItsKey() {
        Checkout pay = aPay(5000, 1200);
        Traceparent gateway = Traceparent.random();

        Response paid = gateway.pay(pay);

        assertEquals(201, paid.statusCode(), paid.asString());
        List<SpanData> spans = spansOf(gateway.traceId(), all -> all.stream().anyMatch(ExportedSpansTest::isDatabase)
                && all.stream().anyMatch(ExportedSpansTest::isRedis) && all.stream().anyMatch(span -> span.getKind() == SpanKind.SERVER));
        SpanData server = spans.stream().filter(span -> span.getKind() == SpanKind.SERVER).findFirst().orElseThrow();
        assertEquals(gateway.parentSpanId(), server.getParentSpanId(), "the server span is a child of the gateway's");
        assertEquals(pay.key(), server.getAttributes().get(KEY));
        assertEquals("pay", server.getAttributes().get(AttributeKey.stringKey("payonce.operation")));
        assertEquals("order:" + pay.order(), server.getAttributes().get(AttributeKey.stringKey("payonce.target")));
        assertEquals(pay.userId(), server.getAttributes().get(AttributeKey.stringKey("enduser.id")));
        assertTrue(spans.stream().filter(ExportedSpansTest::isDatabase).count() >= 5,
                "the pay's statements are spans of its trace: " + names(spans));
        assertFalse(spans.stream().anyMatch(span -> span.getAttributes().asMap().values().stream()
                .anyMatch(value -> String.valueOf(value).contains(pay.bearer()))), "no span holds the bearer token");
        assertTrue(started.anyOf(gateway.traceId()), "what TracingTest finds missing there is recorded here");
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
        List<SpanData> spans = spansOf(gateway.traceId(), all -> all.stream().anyMatch(ExportedSpansTest::isRedis)
                && all.stream().anyMatch(ExportedSpansTest::isDatabase) && all.stream().anyMatch(span -> span.getKind() == SpanKind.SERVER));
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
        Traceparent first = Traceparent.random();
        Traceparent retry = Traceparent.random();

        first.pay(pay);
        Response replayed = retry.pay(pay);

        assertEquals("true", replayed.header("Idempotent-Replayed"));
        for (Traceparent attempt : List.of(first, retry)) {
            List<SpanData> spans = spansOf(attempt.traceId(), all -> all.stream().anyMatch(span -> pay.key().equals(span.getAttributes().get(KEY))));
            assertTrue(spans.stream().anyMatch(span -> span.getKind() == SpanKind.SERVER && pay.key().equals(span.getAttributes().get(KEY))));
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
}
