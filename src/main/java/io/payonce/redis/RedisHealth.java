package io.payonce.redis;

import io.micrometer.core.instrument.MeterRegistry;
import io.payonce.metrics.Reachability;
import io.quarkus.redis.datasource.ReactiveRedisDataSource;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.health.api.Wellness;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.health.HealthCheckResponse;

import java.time.Duration;

/**
 * Whether Redis answers, for operators: a wellness check in {@code /q/health} and the gauge
 * {@code payonce_redis_reachable}. Deliberately not a readiness check: payonce pays without Redis
 * (the database alone keeps payments single), so an instance must stay in rotation when Redis is
 * gone, exactly when a readiness check on it would take every instance out at once.
 */
@Wellness
@ApplicationScoped
public class RedisHealth implements AsyncHealthCheck {

    private static final String NAME = "Redis (pay lock and submit tokens)";
    private static final Duration PING_TIMEOUT = Duration.ofMillis(500);

    private final ReactiveRedisDataSource redis;
    private final Reachability reachability;

    public RedisHealth(ReactiveRedisDataSource redis, MeterRegistry registry) {
        this.redis = redis;
        this.reachability = new Reachability(registry, "payonce.redis.reachable", "1 when Redis answered the last ping, 0 when it did not");
    }

    @Override
    public Uni<HealthCheckResponse> call() {
        return ping().map(up -> HealthCheckResponse.named(NAME)
                .status(up)
                .withData("degraded-mode", up ? "off" : "paying without the lock; order forms answer 503")
                .build());
    }

    /** Keeps the gauge current between health calls. */
    @Scheduled(every = "5s", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> probe() {
        return ping().replaceWithVoid();
    }

    private Uni<Boolean> ping() {
        return reachability.probe(redis.execute("PING"), PING_TIMEOUT);
    }
}
