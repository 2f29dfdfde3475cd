package io.payonce.db;

import io.micrometer.core.instrument.MeterRegistry;
import io.payonce.metrics.Reachability;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;

/**
 * Whether the database answers, as the gauge {@code payonce_database_reachable}. Readiness depends on
 * the database alone, so when it is gone every instance is taken out of the Service at once: no
 * request arrives to be refused (no 503 to count) while Prometheus, which scrapes not-ready pods too,
 * still finds every instance up. This gauge is what pages then.
 * <p>
 * The readiness check is Quarkus's own: it blocks a worker thread on the answer and keeps it to
 * itself. The gauge asks the same question of the same pool ({@code SELECT 1}, as that check does),
 * without blocking, so it reads what readiness reads even between the kubelet's probes.
 */
@ApplicationScoped
public class DatabaseReachability {

    /** The statement the reactive datasource's readiness check runs. */
    private static final String PROBE = "SELECT 1";
    /** Unanswered for a whole probe period: unreachable, as far as a pay is concerned. */
    private static final Duration PROBE_TIMEOUT = Duration.ofSeconds(5);

    private final Pool pool;
    private final Reachability reachability;

    public DatabaseReachability(Pool pool, MeterRegistry registry) {
        this.pool = pool;
        this.reachability = new Reachability(registry, "payonce.database.reachable",
                "1 when the database answered the last probe, 0 when it did not: readiness is DOWN then");
    }

    @Scheduled(every = "5s", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> probe() {
        return reachability.probe(pool.query(PROBE).execute(), PROBE_TIMEOUT).replaceWithVoid();
    }
}
