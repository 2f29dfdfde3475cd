package io.payonce.tracing;

import com.sun.net.httpserver.HttpServer;
import io.payonce.support.Await;
import io.payonce.support.PackagedInstance;
import io.restassured.RestAssured;
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
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Export switched on: with PAYONCE_TRACING_EXPORTER=otlp, or with no more than Quarkus's own OTLP
 * settings naming a collector (what an OpenTelemetry Operator injects), the packaged application (the
 * native executable when the build made one) sends a request's spans to that collector. The
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

    private static void assertARequestsSpansReach(Collector collector, Map<String, String> exportSettings) throws Exception {
        Traceparent gateway = Traceparent.random();
        try (PackagedInstance instance = PackagedInstance.start("otlp-export", DATABASE, true, exportSettings)) {
            Response page = RestAssured.given().port(instance.port()).header("traceparent", gateway.header()).get("/problems");
            assertEquals(200, page.statusCode(), page.asString());

            Export export = collector.awaitExportHolding(HexFormat.of().parseHex(gateway.traceId()));
            assertTrue(export.path().endsWith("/v1/traces"), export.path());
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

        Export awaitExportHolding(byte[] traceId) {
            return Await.until(() -> exports.stream().filter(export -> export.holds(traceId)).findFirst(), Optional::isPresent,
                    Duration.ofSeconds(10), "an export of the trace at the collector, among " + exports.size()).orElseThrow();
        }

        @Override
        public void close() {
            server.stop(0);
        }
    }
}
