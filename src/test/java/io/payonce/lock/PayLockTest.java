package io.payonce.lock;

import io.payonce.support.Await;
import io.payonce.support.PrivateRedis;
import io.payonce.support.PrivateRedisProfile;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The pay lock on its own: it lives for its TTL and no longer, and only its owner releases it. */
@QuarkusTest
@TestProfile(PrivateRedisProfile.class)
class PayLockTest {

    private static final Duration WAIT = Duration.ofSeconds(5);
    /** When to give up on Redis expiring the lock: well past its TTL. */
    private static final Duration EXPIRED_WITHIN = Duration.ofMillis(PrivateRedisProfile.LOCK_TTL_MILLIS).plusSeconds(10);

    @Inject
    PayLock lock;

    @Test
    void theLockExpiresAfterItsTtlAndCanThenBeTakenAgain() {
        long order = anOrderId();
        LockHandle first = lock.acquire(order).await().atMost(WAIT);
        long ttl = Long.parseLong(PrivateRedis.run("PTTL", first.key()));

        LockHandle whileHeld = lock.acquire(order).await().atMost(WAIT);
        // Redis itself says the key has expired, nobody having released it: the lock is taken again only then.
        Await.until(() -> "0".equals(PrivateRedis.run("EXISTS", first.key())), EXPIRED_WITHIN, "Redis expiring the lock at its TTL");
        LockHandle afterExpiry = lock.acquire(order).await().atMost(WAIT);

        assertEquals(LockHandle.State.HELD, first.state());
        assertTrue(ttl > 0 && ttl <= PrivateRedisProfile.LOCK_TTL_MILLIS, "PTTL " + ttl);
        assertEquals(LockHandle.State.BUSY, whileHeld.state());
        assertEquals(LockHandle.State.HELD, afterExpiry.state(), "a holder that never released is cut off by the TTL");
        lock.release(afterExpiry).await().atMost(WAIT);
    }

    /** A holder whose lock expired while it was paused must not delete the lock a later request took. */
    @Test
    void onlyTheOwnerReleasesTheLock() {
        long order = anOrderId();
        LockHandle paused = lock.acquire(order).await().atMost(WAIT);
        PrivateRedis.run("DEL", paused.key());
        LockHandle later = lock.acquire(order).await().atMost(WAIT);

        lock.release(paused).await().atMost(WAIT);

        assertEquals(later.owner(), PrivateRedis.run("GET", later.key()), "the later holder keeps its lock");
        lock.release(later).await().atMost(WAIT);
        assertEquals("0", PrivateRedis.run("EXISTS", later.key()), "its owner released it");
    }

    private static long anOrderId() {
        return ThreadLocalRandom.current().nextLong(1_000_000_000L, Long.MAX_VALUE);
    }
}
