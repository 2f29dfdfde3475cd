package io.payonce.ops;

import io.payonce.support.Database;
import io.payonce.support.Management;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A database failover closes every connection an instance holds, and every instance is probed at
 * once: readiness must answer for the pool that serves requests, so that an instance that can serve
 * stays in rotation. The JDBC pool (Flyway and the start-up checks) keeps an idle connection the
 * failover closed; its check, in readiness, made every instance answer its next probe 503.
 */
@QuarkusTest
class ReadinessThroughAFailoverTest {

    private static final String JDBC_POOL = "Database connections health check";
    private static final String REACTIVE_POOL = "Reactive MySQL connections health check";

    private final Database db = Database.forTests();

    @Test
    void readinessIsThePoolThatServesRequests() {
        Response ready = Management.get("/q/health/ready");

        assertEquals("UP", Checks.status(ready, REACTIVE_POOL), ready.asString());
        assertNull(Checks.status(ready, JDBC_POOL), "the JDBC pool serves no request: " + ready.asString());
    }

    @Test
    void theNextProbeAfterEveryConnectionIsClosedIsUp() {
        assertEquals(200, Management.get("/q/health/ready").statusCode(), "ready before");

        int closed = db.killEveryConnection();
        Response next = Management.get("/q/health/ready");

        assertTrue(closed > 0, "the instance's connections were closed under it");
        assertEquals(200, next.statusCode(), "the next probe after " + closed + " connections closed: " + next.asString());
    }
}
