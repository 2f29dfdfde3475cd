package io.payonce.redis;

import io.vertx.redis.client.impl.types.ErrorType;

import java.util.Set;

/** Which Redis error replies mean "not now" rather than a bug. */
public final class RedisErrors {

    /**
     * Closed connection, loading, busy script, failover under way (down, read-only replica, too few
     * replicas), out of memory or unable to persist.
     */
    private static final Set<String> TRANSIENT = Set.of("CONNECTION_CLOSED", "LOADING", "BUSY", "MASTERDOWN",
            "CLUSTERDOWN", "TRYAGAIN", "READONLY", "NOREPLICAS", "OOM", "MISCONF");

    private RedisErrors() {
    }

    public static boolean isTransient(Throwable failure) {
        return failure instanceof ErrorType reply && TRANSIENT.stream().anyMatch(reply::is);
    }
}
