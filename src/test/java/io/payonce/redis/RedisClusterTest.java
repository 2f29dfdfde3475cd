package io.payonce.redis;

import io.payonce.lock.LockHandle;
import io.payonce.lock.PayLock;
import io.payonce.support.Api;
import io.payonce.support.PrivateRedisCluster;
import io.payonce.support.RedisCli;
import io.payonce.support.RedisClusterProfile;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What only a Redis Cluster can get wrong ({@code quarkus.redis.client-type=cluster}): pay locks
 * spread over the cluster's slots, and a submit token and its consumed marker in one slot, so that
 * the consuming script may touch both. The Redis-facing test classes run on the cluster too (their
 * {@code *OnRedisClusterTest} variants).
 */
@QuarkusTest
@TestProfile(RedisClusterProfile.class)
class RedisClusterTest {

    private static final Duration WAIT = Duration.ofSeconds(5);

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
    void aSubmitTokenAndItsConsumedMarkerShareASlot() {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);
        String token = Api.submitToken(bearer);

        Response created = Api.createOrder(bearer, token, "sn-" + UUID.randomUUID(), 1500);

        assertEquals(201, created.statusCode(), created.asString());
        String tokenKey = "payonce:token:{" + token + "}";
        assertEquals(PrivateRedisCluster.run("CLUSTER", "KEYSLOT", tokenKey),
                PrivateRedisCluster.run("CLUSTER", "KEYSLOT", tokenKey + ":consumed"));
        assertEquals(user, PrivateRedisCluster.run("GET", tokenKey + ":consumed"), "the marker names the owner");
        assertEquals("0", PrivateRedisCluster.run("EXISTS", tokenKey), "the token itself is consumed");
    }
}
