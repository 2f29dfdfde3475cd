package io.payonce.support;

import io.restassured.RestAssured;
import io.restassured.response.Response;

/** The management interface (health and metrics), on a port of its own: quarkus.management.test-port. */
public final class Management {

    public static final int TEST_PORT = 9001;

    private Management() {
    }

    public static Response get(String path) {
        return RestAssured.given().port(TEST_PORT).get(path);
    }

    public static String metrics() {
        return get("/q/metrics").asString();
    }
}
