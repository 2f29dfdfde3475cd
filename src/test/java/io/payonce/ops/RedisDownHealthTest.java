package io.payonce.ops;

import io.payonce.support.Api;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

@QuarkusTest
@TestProfile(UnreachableStores.Redis.class)
class RedisDownHealthTest {

    @Test
    void readinessIsDownWhenRedisIsUnreachable() {
        Response response = RestAssured.get("/q/health/ready");

        assertEquals(503, response.statusCode(), response.asString());
        assertEquals("DOWN", response.jsonPath().getString("status"));
        assertEquals("DOWN", Checks.status(response, "Redis connection health check"));
        assertEquals("UP", Checks.status(response, "Reactive MySQL connections health check"));
    }

    @Test
    void submitTokensNeedRedisAndSaySo() {
        Response response = Api.as(Tokens.user(Tokens.newUserId())).get("/orders/token");

        assertEquals(503, response.statusCode(), response.asString());
        assertEquals("DEPENDENCY_UNAVAILABLE", response.jsonPath().getString("code"));
        assertEquals("1", response.header("Retry-After"));
    }
}
