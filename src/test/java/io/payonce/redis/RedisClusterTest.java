package io.payonce.redis;

import io.payonce.lock.LockHandle;
import io.payonce.lock.PayLock;
import io.payonce.support.Api;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.Management;
import io.payonce.support.PrivateRedisCluster;
import io.payonce.support.RedisCli;
import io.payonce.support.RedisClusterProfile;
import io.payonce.support.Replays;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every Redis path of payonce on a three-master Redis Cluster ({@code quarkus.redis.client-type=cluster}):
 * the pay lock (SET NX PX and the owner-only release script), the submit token's issue and its
 * consuming script with the consumed marker, and pays with their repeats, none going without the lock.
 */
@QuarkusTest
@TestProfile(RedisClusterProfile.class)
class RedisClusterTest {

    private static final Duration WAIT = Duration.ofSeconds(5);
    private static final String UNLOCKED_PAYS = "payonce_lock_degraded_total";

    private final Database db = Database.forTests();

    @Inject
    PayLock lock;

    @Test
    void thePayLockIsTakenRefusedAndReleasedOnTheCluster() {
        Set<String> slots = new HashSet<>();
        for (int i = 0; i < 12; i++) {
            long order = ThreadLocalRandom.current().nextLong(1, Long.MAX_VALUE);
            LockHandle held = lock.acquire(order).await().atMost(WAIT);
            LockHandle twin = lock.acquire(order).await().atMost(WAIT);

            assertEquals(LockHandle.State.HELD, held.state());
            assertEquals(LockHandle.State.BUSY, twin.state());
            assertEquals(held.owner(), PrivateRedisCluster.run("GET", RedisCli.payLockKey(order)));
            slots.add(PrivateRedisCluster.run("CLUSTER", "KEYSLOT", RedisCli.payLockKey(order)));
            lock.release(held).await().atMost(WAIT);
            assertEquals("0", PrivateRedisCluster.run("EXISTS", RedisCli.payLockKey(order)), "the owner released it");
        }
        assertTrue(slots.size() > 1, "the locks were spread over slots: " + slots);
    }

    @Test
    void aSubmitTokenAndItsConsumedMarkerShareASlotAndCreateOneOrder() throws Exception {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);
        String token = Api.submitToken(bearer);
        String sn = "sn-" + UUID.randomUUID();

        List<Response> answers = Concurrently.run(2, () -> Api.createOrder(bearer, token, sn, 1500));

        assertEquals(201, answers.get(0).statusCode(), answers.get(0).asString());
        Replays.assertSameAnswer(answers.get(0), answers.get(1));
        assertEquals(1, db.count("SELECT COUNT(*) FROM orders WHERE user_id = ?", user));
        String tokenKey = "payonce:token:{" + token + "}";
        assertEquals(PrivateRedisCluster.run("CLUSTER", "KEYSLOT", tokenKey),
                PrivateRedisCluster.run("CLUSTER", "KEYSLOT", tokenKey + ":consumed"));
        assertEquals(user, PrivateRedisCluster.run("GET", tokenKey + ":consumed"), "the marker names the owner");
        assertEquals("0", PrivateRedisCluster.run("EXISTS", tokenKey), "the token itself is consumed");
    }

    @Test
    void paysOnTheClusterGoWithTheLockAndReleaseIt() {
        String user = Tokens.newUserId();
        Api.fundedAccount(user, 10_000);
        String bearer = Tokens.user(user);
        double unlockedBefore = Management.sample(Management.metrics(), UNLOCKED_PAYS);

        for (int i = 0; i < 10; i++) {
            long order = Api.newOrder(bearer, 100);
            String key = Api.newKey();
            Response first = Api.pay(bearer, order, key);
            assertEquals(201, first.statusCode(), first.asString());
            Replays.assertReplayOf(first, Api.pay(bearer, order, key));
            assertEquals("0", PrivateRedisCluster.run("EXISTS", RedisCli.payLockKey(order)), "the lock was released");
        }

        assertEquals(9000, db.balance(user));
        assertEquals(unlockedBefore, Management.sample(Management.metrics(), UNLOCKED_PAYS), "no pay went without the lock");
    }
}
