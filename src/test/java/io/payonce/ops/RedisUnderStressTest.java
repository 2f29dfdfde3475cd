package io.payonce.ops;

import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.Meters;
import io.payonce.support.PrivateRedis;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

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

    private static final int FORMS = 60;
    /** The pool's one connection and its one waiting place (TinyRedisPool): what a paused Redis leaves not turned away. */
    private static final int POOL_PLACES = 2;
    /**
     * Vert.x's count of asks for a Redis connection that failed (as Quarkus Micrometer names it): here
     * the full pool's refusals, of forms and of the health probe's pings, which only add to it.
     */
    private static final String POOL_REJECTED = "redis.pool.rejected";

    private final Database db = Database.forTests();
    private final ExecutorService client = Executors.newSingleThreadExecutor();

    @Inject
    Meters meters;

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
    void unpauseAndStopTheClient() {
        try {
            PrivateRedis.run("CLIENT", "UNPAUSE");
        } finally {
            client.shutdownNow();
        }
    }

    /**
     * Redis paused for writes answers no SET: the first form's call keeps the pool's one connection
     * busy and the second takes its one waiting place, so that every form behind them finds the pool
     * full, on any machine. Redis takes writes again once they have been turned away; the two in the
     * pool then get a token or, past their call's bound, a 503.
     */
    @Test
    void sixtyConcurrentFormsAgainstAFullRedisPoolGetATokenOrA503() throws Exception {
        String bearer = Tokens.user(Tokens.newUserId());
        // Redis answering and the pool's connection open, so that every form of the burst reaches the pool.
        tokenOnceRedisAnswers(bearer);
        double turnedAwayBefore = turnedAway();
        // WRITE, not ALL: a paused Redis holds back CLIENT UNPAUSE too, until the pause runs out.
        PrivateRedis.run("CLIENT", "PAUSE", "30000", "WRITE");
        Future<List<Response>> burst = client.submit(() -> Concurrently.run(FORMS, () -> Api.as(bearer).get("/orders/token")));
        Await.until(() -> turnedAway() - turnedAwayBefore >= FORMS - POOL_PLACES, Duration.ofSeconds(20),
                "set-up: every form beyond the pool's connection and its waiting place turned away");
        PrivateRedis.run("CLIENT", "UNPAUSE");

        List<Response> answers = burst.get(60, TimeUnit.SECONDS);
        long issued = answers.stream().filter(a -> a.statusCode() == 200).count();
        long unavailable = answers.stream().filter(RedisUnderStressTest::isUnavailable).count();
        System.out.printf("%d concurrent GET /orders/token on a one-connection Redis pool: 200=%d 503=%d%n", FORMS, issued, unavailable);
        assertEquals(FORMS, issued + unavailable, "every answer is a token or a 503: " + statuses(answers));
        assertTrue(unavailable > 0, "set-up: the pool really overflowed");
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

    private double turnedAway() {
        return meters.count(POOL_REJECTED, "pool.type", "redis");
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
