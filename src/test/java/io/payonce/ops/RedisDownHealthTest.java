package io.payonce.ops;

import io.payonce.support.Api;
import io.payonce.support.GatedStores.Store;
import io.payonce.support.GatedStores;
import io.payonce.support.Management;
import io.payonce.support.StoreDown;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@QuarkusTest
@TestProfile(GatedStores.class)
@StoreDown(Store.REDIS)
class RedisDownHealthTest {

    /** payonce pays without Redis, so losing Redis must not take every instance out of rotation at once. */
    @Test
    void readinessStaysUpWhenRedisIsUnreachableAndHealthSaysSo() {
        Response ready = Management.get("/q/health/ready");
        Response all = Management.get("/q/health");

        assertEquals(200, ready.statusCode(), ready.asString());
        assertEquals("UP", ready.jsonPath().getString("status"));
        assertEquals("UP", Checks.status(ready, "Reactive MySQL connections health check"));
        assertEquals("DOWN", Checks.status(all, Checks.REDIS), all.asString());
        assertTrue(Management.metrics().contains("payonce_redis_reachable 0.0"));
    }

    @Test
    void submitTokensNeedRedisAndSaySo() {
        Response response = Api.as(Tokens.user(Tokens.newUserId())).get("/orders/token");

        assertEquals(503, response.statusCode(), response.asString());
        assertEquals("DEPENDENCY_UNAVAILABLE", response.jsonPath().getString("code"));
        assertEquals("1", response.header("Retry-After"));
    }
}
