package io.payonce.api;

import io.payonce.errors.ErrorCode;
import io.payonce.errors.Problem;
import io.payonce.support.Management;
import io.quarkus.runtime.ShutdownDelayInitiatedEvent;
import io.quarkus.runtime.ShutdownEvent;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import jakarta.enterprise.event.Event;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * An instance that is stopping still serves during the shutdown delay, and refuses every API request
 * once the shutdown waits for its last work: a 503 problem to retry at once, on a new connection, before
 * anything of the request is looked at. The events are fired here as Quarkus fires them on SIGTERM; a
 * profile of its own, since a stop cannot be undone.
 */
@QuarkusTest
@TestProfile(StoppedRefusalTest.OwnInstance.class)
class StoppedRefusalTest {

    @Inject
    Event<ShutdownDelayInitiatedEvent> shutdownDelay;

    @Inject
    Event<ShutdownEvent> shutdown;

    @Test
    void servesDuringTheDelayAndRefusesOnceTheShutdownWaits() {
        shutdownDelay.fire(new ShutdownDelayInitiatedEvent());
        assertEquals(401, pay().statusCode(), "during the delay a request is still served: here, refused for its missing token");

        shutdown.fire(new ShutdownEvent());
        Response refused = pay();
        assertEquals(503, refused.statusCode(), refused.asString());
        assertEquals(Problem.MEDIA_TYPE, refused.contentType());
        assertEquals("1", refused.header("Retry-After"));
        assertEquals("close", refused.header("Connection"));
        assertEquals(ErrorCode.DEPENDENCY_UNAVAILABLE.name(), refused.jsonPath().getString("code"));
        assertEquals(200, Management.get("/q/health/live").statusCode(), "the management endpoints are not refused");
    }

    private static Response pay() {
        return RestAssured.given().header("Idempotency-Key", "k-stopping").post("/orders/1/pay");
    }

    public static final class OwnInstance implements QuarkusTestProfile {
    }
}
