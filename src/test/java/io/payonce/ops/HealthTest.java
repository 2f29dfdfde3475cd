package io.payonce.ops;

import io.payonce.support.Management;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

@QuarkusTest
class HealthTest {

    @Test
    void readinessIsUpWhenMariaDbAnswersAndRedisIsReportedBeside() {
        Response ready = Management.get("/q/health/ready");
        Response all = Management.get("/q/health");

        assertEquals(200, ready.statusCode(), ready.asString());
        assertEquals("UP", ready.jsonPath().getString("status"));
        assertEquals("UP", Checks.status(ready, "Reactive MySQL connections health check"));
        assertNull(Checks.status(ready, Checks.REDIS), "Redis is not a readiness check");
        assertEquals("UP", Checks.status(all, Checks.REDIS));
        assertTrue(Management.metrics().contains("payonce_redis_reachable 1.0"));
    }

    @Test
    void healthAndMetricsAnswerOnTheManagementPortOnly() {
        assertEquals(404, RestAssured.get("/q/health/ready").statusCode());
        assertEquals(404, RestAssured.get("/q/metrics").statusCode());
        assertEquals(200, Management.get("/q/health/live").statusCode());
    }

    @Test
    void swaggerUiExistsOnlyInDevMode() {
        assertEquals(404, RestAssured.get("/q/swagger-ui").statusCode());
        assertEquals(404, RestAssured.get("/q/swagger-ui/index.html").statusCode());
    }

    @Test
    void metricsAreExposedForPrometheus() {
        Response response = Management.get("/q/metrics");

        assertEquals(200, response.statusCode());
        assertTrue(response.asString().contains("payonce_orders_auto_closed_total"));
    }
}
