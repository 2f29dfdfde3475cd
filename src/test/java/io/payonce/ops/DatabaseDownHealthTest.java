package io.payonce.ops;

import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.GatedStores.Store;
import io.payonce.support.GatedStores;
import io.payonce.support.Management;
import io.payonce.support.StoreDown;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** MariaDB goes away under the running service: every connection cut, none accepted until each test ends. */
@QuarkusTest
@TestProfile(GatedStores.class)
@StoreDown(Store.MARIADB)
class DatabaseDownHealthTest {

    private static final String REACHABLE = "payonce_database_reachable";
    /** Three probe periods of the gauge: it has looked, and had its answer, well within that. */
    private static final Duration PROBE_WAIT = Duration.ofSeconds(15);

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

    /**
     * Every instance unready means no request arrives to be refused and every scrape still succeeds:
     * this gauge is what tells Prometheus that nothing can pay. It follows the database both ways,
     * so the test lets MariaDB back first, to see the gauge fall from 1.
     */
    @Test
    void theReachableGaugeFallsToZeroWithoutTheDatabaseAndRisesWhenItIsBack() {
        Store.MARIADB.gate().open();
        assertEquals(1.0, gaugeOnceItReads(1.0), "with MariaDB answering");

        Store.MARIADB.gate().shut();
        assertEquals(0.0, gaugeOnceItReads(0.0), "with MariaDB unreachable");

        Store.MARIADB.gate().open();
        assertEquals(1.0, gaugeOnceItReads(1.0), "with MariaDB back");
    }

    /** The gauge as exposed (NaN while it is not), once it shows {@code expected}; fails after the probe wait. */
    private static double gaugeOnceItReads(double expected) {
        return Await.until(DatabaseDownHealthTest::exposedGauge, value -> value == expected, PROBE_WAIT, REACHABLE + " " + expected);
    }

    private static double exposedGauge() {
        return Management.metrics().lines()
                .filter(line -> line.startsWith(REACHABLE + " "))
                .mapToDouble(line -> Double.parseDouble(line.substring(REACHABLE.length() + 1).trim()))
                .findFirst()
                .orElse(Double.NaN);
    }
}
