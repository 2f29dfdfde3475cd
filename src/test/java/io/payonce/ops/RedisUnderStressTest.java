package io.payonce.ops;

import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.PrivateRedis;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Redis overloaded or paused, on a Redis of the test's own with a one-connection pool: every answer
 * on the order endpoints is a success or 503 DEPENDENCY_UNAVAILABLE with Retry-After, never a 500,
 * and a submission whose answer is stored is replayed from the database alone.
 */
@QuarkusTest
@TestProfile(RedisUnderStressTest.TinyRedisPool.class)
class RedisUnderStressTest {

    private final Database db = Database.forTests();

    public static class TinyRedisPool implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.redis.max-pool-size", "1", "quarkus.redis.max-pool-waiting", "1");
        }

        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(PrivateRedis.class));
        }
    }

    @AfterEach
    void unpause() {
        PrivateRedis.run("CLIENT", "UNPAUSE");
    }

    @Test
    void sixtyConcurrentFormsAgainstAFullRedisPoolGetATokenOrA503() throws Exception {
        String bearer = Tokens.user(Tokens.newUserId());

        List<Response> answers = Concurrently.run(60, () -> Api.as(bearer).get("/orders/token"));

        long issued = answers.stream().filter(a -> a.statusCode() == 200).count();
        long unavailable = answers.stream().filter(RedisUnderStressTest::isUnavailable).count();
        System.out.printf("60 concurrent GET /orders/token on a one-connection Redis pool: 200=%d 503=%d%n", issued, unavailable);
        assertEquals(60, issued + unavailable, "every answer is a token or a 503: " + statuses(answers));
        assertTrue(unavailable > 0, "the pool really overflowed");
    }

    @Test
    void aPausedRedisIsA503OnTheOrderForm() {
        String bearer = Tokens.user(Tokens.newUserId());
        String token = tokenOnceRedisAnswers(bearer);
        PrivateRedis.run("CLIENT", "PAUSE", "3000", "ALL");

        Response form = Api.as(bearer).get("/orders/token");
        Response submit = Api.createOrder(bearer, token, "sn-" + UUID.randomUUID(), 500);

        assertTrue(isUnavailable(form), form.asString());
        assertTrue(isUnavailable(submit), submit.asString());
    }

    @Test
    void aStoredSubmissionIsReplayedFromTheDatabaseWhileRedisIsPaused() {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);
        String token = tokenOnceRedisAnswers(bearer);
        String sn = "sn-" + UUID.randomUUID();
        Response first = Api.createOrder(bearer, token, sn, 500);
        PrivateRedis.run("CLIENT", "PAUSE", "3000", "ALL");

        Response repeat = Api.createOrder(bearer, token, sn, 500);

        assertEquals(201, first.statusCode(), first.asString());
        assertEquals(201, repeat.statusCode(), repeat.asString());
        assertEquals("true", repeat.header("Idempotent-Replayed"));
        assertEquals(first.asString(), repeat.asString());
        assertEquals(1, db.count("SELECT COUNT(*) FROM orders WHERE user_id = ?", user));
    }

    /**
     * A form token once the breaker in front of Redis has closed again: an earlier test that
     * overloaded the one-connection pool may have left it open for its delay.
     */
    private static String tokenOnceRedisAnswers(String bearer) {
        return Await.until(() -> Api.as(bearer).get("/orders/token"), response -> {
            assertTrue(response.statusCode() == 200 || isUnavailable(response), response.asString());
            return response.statusCode() == 200;
        }, Duration.ofSeconds(10), "a submit token once Redis answers again").jsonPath().getString("token");
    }

    private static boolean isUnavailable(Response response) {
        return response.statusCode() == 503
                && "DEPENDENCY_UNAVAILABLE".equals(response.jsonPath().getString("code"))
                && response.header("Retry-After") != null;
    }

    private static List<Integer> statuses(List<Response> answers) {
        return answers.stream().map(Response::statusCode).toList();
    }
}
