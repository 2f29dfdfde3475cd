package io.payonce.ops;

import io.payonce.support.Api;
import io.payonce.support.GatedStores;
import io.payonce.support.Management;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

@QuarkusTest
@TestProfile(GatedStores.class)
class DatabaseDownHealthTest {

    /** MariaDB goes away under the running service: every connection cut, none accepted until the test ends. */
    @BeforeEach
    void shutTheDatabaseAway() {
        GatedStores.mariaDb().shut();
    }

    @AfterEach
    void letItBack() {
        GatedStores.mariaDb().open();
    }

    @Test
    void readinessIsDownWhenMariaDbIsUnreachable() {
        Response response = Management.get("/q/health/ready");

        assertEquals(503, response.statusCode(), response.asString());
        assertEquals("DOWN", response.jsonPath().getString("status"));
        assertEquals("DOWN", Checks.status(response, "Reactive MySQL connections health check"));
    }

    @Test
    void readingAnOrderWithoutTheDatabaseIsAServiceUnavailableProblem() {
        Response response = Api.as(Tokens.ops()).get("/orders/1");

        assertEquals(503, response.statusCode(), response.asString());
        assertEquals("DEPENDENCY_UNAVAILABLE", response.jsonPath().getString("code"));
        assertEquals("1", response.header("Retry-After"));
    }
}
