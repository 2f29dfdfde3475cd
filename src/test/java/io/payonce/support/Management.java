package io.payonce.support;

import io.restassured.RestAssured;
import io.restassured.response.Response;

/**
 * The management interface (health, metrics, OpenAPI), on a port of its own: the build reserves a
 * free one and passes it as {@code quarkus.management.test-port}; 9001 when a test runs outside it.
 */
public final class Management {

    public static final int TEST_PORT = Integer.getInteger("quarkus.management.test-port", 9001);

    private Management() {
    }

    public static Response get(String path) {
        return RestAssured.given().port(TEST_PORT).get(path);
    }

    public static String metrics() {
        return get("/q/metrics").asString();
    }

    /**
     * The value of one series in a Prometheus text taken from {@link #metrics()}, named exactly as
     * exposed, such as {@code payonce_requests_total{operation="pay",outcome="executed"}}; 0 when the
     * series is absent, as a counter is before its first increment.
     */
    public static double sample(String metrics, String series) {
        return metrics.lines()
                .filter(line -> line.startsWith(series + " "))
                .mapToDouble(line -> Double.parseDouble(line.substring(series.length() + 1).trim().split(" ")[0]))
                .findFirst()
                .orElse(0);
    }
}
