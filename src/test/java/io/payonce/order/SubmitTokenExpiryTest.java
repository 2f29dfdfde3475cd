package io.payonce.order;

import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Database;
import io.payonce.support.RedisCli;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A submit token lives for its configured TTL (10 minutes) in Redis, and an expired one creates nothing. */
@QuarkusTest
class SubmitTokenExpiryTest {

    private static final long TTL_MILLIS = 600_000;

    private final Database db = Database.forTests();

    @Test
    void aTokenIsIssuedWithItsTtlAndAnExpiredOneAsksForAReload() {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);
        String token = Api.submitToken(bearer);
        String key = "payonce:token:{" + token + "}";
        long ttl = Long.parseLong(RedisCli.run("PTTL", key));
        assertTrue(ttl > TTL_MILLIS - 60_000 && ttl <= TTL_MILLIS, "PTTL " + ttl);

        assertEquals("1", RedisCli.run("PEXPIRE", key, "1"));
        Await.until(() -> "0".equals(RedisCli.run("EXISTS", key)), Duration.ofSeconds(5), "the token expired");
        Response late = Api.createOrder(bearer, token, "sn-" + UUID.randomUUID(), 500);

        assertEquals(409, late.statusCode(), late.asString());
        assertEquals("SUBMIT_TOKEN_INVALID", late.jsonPath().getString("code"));
        assertEquals(0, db.count("SELECT COUNT(*) FROM orders WHERE user_id = ?", user));
    }
}
