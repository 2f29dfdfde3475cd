package io.payonce.ops;

import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@QuarkusTest
class HealthTest {

    @Test
    void readinessIsUpWhenMariaDbAndRedisAnswer() {
        Response response = RestAssured.get("/q/health/ready");

        assertEquals(200, response.statusCode(), response.asString());
        assertEquals("UP", response.jsonPath().getString("status"));
        assertEquals("UP", Checks.status(response, "Reactive MySQL connections health check"));
        assertEquals("UP", Checks.status(response, "Redis connection health check"));
    }

    @Test
    void openApiDocumentsEveryEndpointAndTheSubmitTokenHeader() {
        String document = RestAssured.get("/q/openapi?format=json").asString();

        for (String path : new String[] {"/orders", "/orders/token", "/orders/{id}", "/orders/{id}/ship",
                "/orders/{id}/complete", "/orders/{id}/cancel", "/accounts", "/accounts/{userId}", "/accounts/{userId}/entries"}) {
            assertTrue(document.contains("\"" + path + "\""), "documented: " + path);
        }
        assertTrue(document.contains("Submit-Token"));
        assertTrue(document.contains("Idempotent-Replayed"));
        assertTrue(document.contains("DEPENDENCY_UNAVAILABLE"));
        assertTrue(document.contains("SUBMIT_TOKEN_INVALID"));
        assertTrue(document.contains("application/problem+json"));
    }

    @Test
    void theDevTokenEndpointExistsOnlyInDevMode() {
        assertEquals(404, RestAssured.get("/dev/token").statusCode());
    }

    @Test
    void metricsAreExposedForPrometheus() {
        Response response = RestAssured.get("/q/metrics");

        assertEquals(200, response.statusCode());
        assertTrue(response.asString().contains("payonce_orders_auto_closed_total"));
    }
}
