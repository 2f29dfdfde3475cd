package io.payonce.lock;

import io.payonce.config.PayonceConfig;
import io.payonce.redis.CallBound;
import io.payonce.redis.LuaScript;
import io.quarkus.redis.datasource.ReactiveRedisDataSource;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.ConnectionPoolTooBusyException;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.faulttolerance.CircuitBreaker;

import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.List;

/**
 * The Redis calls behind the pay lock, each with a short time bound ({@link CallBound}) and behind a circuit breaker:
 * a slow or absent Redis costs a payment a few hundred milliseconds at most, then nothing at all
 * while the breaker is open. The database keeps payments correct without the lock. A busy local
 * connection pool is this instance's own queue, not Redis failing: it never opens the breaker, and
 * the pool and its queue are sized in configuration for the concurrency an instance serves.
 */
@ApplicationScoped
public class LockCommands {

    private final ReactiveRedisDataSource redis;
    private final LuaScript releaseScript = LuaScript.load("release-lock.lua");
    private final Duration callBound;

    public LockCommands(ReactiveRedisDataSource redis, PayonceConfig config) {
        this.redis = redis;
        this.callBound = config.lock().callBound();
    }

    /** SET key owner NX PX ttl: true when this owner now holds the lock. */
    @CircuitBreaker(requestVolumeThreshold = 10, failureRatio = 0.5, delay = 2, delayUnit = ChronoUnit.SECONDS, successThreshold = 2,
            skipOn = ConnectionPoolTooBusyException.class)
    public Uni<Boolean> setIfAbsent(String key, String owner, Duration ttl) {
        return CallBound.within(callBound, redis.execute("SET", key, owner, "NX", "PX", Long.toString(ttl.toMillis()))
                .map(reply -> reply != null && "OK".equals(reply.toString())));
    }

    /** Compare-and-delete in one script: only the owner releases the lock. */
    @CircuitBreaker(requestVolumeThreshold = 10, failureRatio = 0.5, delay = 2, delayUnit = ChronoUnit.SECONDS, successThreshold = 2,
            skipOn = ConnectionPoolTooBusyException.class)
    public Uni<Boolean> deleteIfOwner(String key, String owner) {
        return CallBound.within(callBound, releaseScript.run(redis, List.of(key), owner).map(reply -> reply.toInteger() == 1));
    }
}
