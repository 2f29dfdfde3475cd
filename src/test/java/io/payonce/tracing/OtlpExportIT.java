package io.payonce.tracing;

import com.sun.net.httpserver.HttpServer;
import io.payonce.support.Await;
import io.payonce.support.InstanceApi;
import io.payonce.support.PackagedInstance;
import io.payonce.support.Tokens;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Export switched on: with PAYONCE_TRACING_EXPORTER=otlp, or with no more than Quarkus's own OTLP
 * settings or the OpenTelemetry Operator's (OTEL_EXPORTER_OTLP_ENDPOINT) naming a collector, the
 * packaged application (the native executable when the build made one) sends a pay's spans to that
 * collector, its statements' and Redis commands' with them. The
 * collector is a small HTTP server of the test's that takes OTLP over HTTP and keeps each export it
 * receives; the request's trace id must be in one of them.
 */
class OtlpExportIT {

    private static final String DATABASE = "payonce_otlp_export";

    @Test
    void aRequestsSpansReachTheConfiguredCollector() throws Exception {
        try (Collector collector = Collector.start()) {
            assertARequestsSpansReach(collector, Map.of(
                    "PAYONCE_TRACING_EXPORTER", "otlp",
                    "QUARKUS_OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", collector.endpoint(),
                    "QUARKUS_OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"));
        }
    }

    @Test
    void quarkusOwnEndpointAloneSwitchesExportOn() throws Exception {
        try (Collector collector = Collector.start()) {
            assertARequestsSpansReach(collector, Map.of(
                    "QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint(),
                    "QUARKUS_OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"));
        }
    }

    @Test
    void theOpenTelemetryOperatorsEndpointAloneSwitchesExportOn() throws Exception {
        try (Collector collector = Collector.start()) {
            assertARequestsSpansReach(collector, Map.of(
                    "OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint(),
                    "OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf"));
        }
    }

    /**
     * A pay under the gateway's trace: its spans reach the collector, those of its SQL statements and
     * Redis commands with them, since export was switched on when the instance started, whatever the
     * build saw (io.payonce.tracing.StatementSpans).
     */
    private static void assertARequestsSpansReach(Collector collector, Map<String, String> exportSettings) throws Exception {
        Traceparent gateway = Traceparent.random();
        try (PackagedInstance instance = PackagedInstance.start("otlp-export", DATABASE, true, exportSettings)) {
            String user = "otlp-" + UUID.randomUUID();
            InstanceApi.fund(instance.port(), user, 5000);
            String bearer = Tokens.user(user);
            long order = InstanceApi.newOrder(instance.port(), bearer, 1200);
            Response paid = InstanceApi.on(instance.port(), bearer).header("traceparent", gateway.header())
                    .header("Idempotency-Key", "pay-" + UUID.randomUUID()).post("/orders/" + order + "/pay");
            assertEquals(201, paid.statusCode(), paid.asString());

            List<Export> exports = collector.awaitExportsHolding(HexFormat.of().parseHex(gateway.traceId()),
                    List.of("INSERT INTO", "redis"));
            assertTrue(exports.stream().allMatch(export -> export.path().endsWith("/v1/traces")), exports.toString());
        }
    }


    private record Export(String path, byte[] body) {

        /** Whether the raw bytes appear in the body, as a trace id does in an OTLP export. */
        boolean holds(byte[] bytes) {
            return new String(body, StandardCharsets.ISO_8859_1).contains(new String(bytes, StandardCharsets.ISO_8859_1));
        }
    }

    /** An OTLP/HTTP endpoint on loopback that answers every export with success and keeps it. */
    private static final class Collector implements AutoCloseable {

        private final HttpServer server;
        private final List<Export> exports = new CopyOnWriteArrayList<>();

        private Collector(HttpServer server) {
            this.server = server;
        }

        static Collector start() throws IOException {
            HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
            Collector collector = new Collector(server);
            server.createContext("/", exchange -> {
                try (InputStream body = exchange.getRequestBody()) {
                    collector.exports.add(new Export(exchange.getRequestURI().getPath(), body.readAllBytes()));
                }
                exchange.getResponseHeaders().add("Content-Type", "application/x-protobuf");
                exchange.sendResponseHeaders(200, -1);
                exchange.close();
            });
            server.start();
            return collector;
        }

        String endpoint() {
            return "http://127.0.0.1:" + server.getAddress().getPort();
        }

        /**
         * The exports holding spans of the trace, once they hold every one of the texts too: a SQL
         * statement's and a Redis command's spans name what they ran.
         */
        List<Export> awaitExportsHolding(byte[] traceId, List<String> texts) {
            return Await.until(() -> exports.stream().filter(export -> export.holds(traceId)).toList(),
                    ofTrace -> texts.stream().allMatch(text -> ofTrace.stream().anyMatch(export -> export.holds(text.getBytes(StandardCharsets.UTF_8)))),
                    Duration.ofSeconds(10), "exports of the trace holding " + texts + " at the collector, among " + exports.size());
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }
}
