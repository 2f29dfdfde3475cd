package io.payonce.redis;

import io.micrometer.core.instrument.MeterRegistry;
import io.payonce.config.StoreAddress;
import io.payonce.metrics.Reachability;
import io.quarkus.redis.datasource.ReactiveRedisDataSource;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.health.api.AsyncHealthCheck;
import io.smallrye.health.api.Wellness;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.health.HealthCheckResponse;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

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

    private static final Logger LOG = Logger.getLogger(RedisHealth.class);

    private final ReactiveRedisDataSource redis;
    private final Reachability reachability;
    private final String address;
    private final AtomicReference<Boolean> answered = new AtomicReference<>();

    public RedisHealth(ReactiveRedisDataSource redis, MeterRegistry registry, @ConfigProperty(name = "quarkus.redis.hosts") String hosts) {
        this.redis = redis;
        this.reachability = new Reachability(registry, "payonce.redis.reachable", "1 when Redis answered the last ping, 0 when it did not");
        this.address = addresses(hosts);
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
        return reachability.probe(redis.execute("PING"), PING_TIMEOUT).invoke(this::told);
    }

    /**
     * Says so when Redis stops or starts answering, once each time: a start without Redis is told at
     * WARN by the first ping, not only in {@code /q/health}, and a Redis that stays away is not told
     * again every five seconds.
     */
    private void told(boolean up) {
        Boolean before = answered.getAndSet(up);
        if (before != null && before == up) {
            return;
        }
        if (!up) {
            LOG.warnf("Redis at %s does not answer: pays go on without the pay lock, and order forms answer 503, until it does; "
                    + "check PAYONCE_REDIS_HOST and PAYONCE_REDIS_PORT", address);
        } else if (before != null) {
            LOG.infof("Redis at %s answers again: pays take the pay lock", address);
        }
    }

    /** host:port of each of Redis's addresses, without what a URI may carry besides (a password). */
    private static String addresses(String hosts) {
        return Arrays.stream(hosts.split(",")).map(StoreAddress::of)
                .map(address -> address == null ? "(an address that cannot be shown without its password)" : address)
                .collect(Collectors.joining(", "));
    }
}
