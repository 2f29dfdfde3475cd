package io.payonce.idempotency;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.payonce.config.PayonceConfig;
import io.payonce.shutdown.BackgroundJob;
import io.payonce.shutdown.Draining;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Deletes idempotency records older than {@code payonce.idempotency.retention}, one small batch per
 * statement. A payment whose key has expired still cannot be repeated: the order's status and
 * UNIQUE(pay_record.order_id) refuse it.
 */
@Startup
@ApplicationScoped
public class RetentionJob {

    private final IdempotencyRepository records;
    private final PayonceConfig config;
    private final BackgroundJob job;
    private final Counter deleted;
    private final AtomicLong lagSeconds = new AtomicLong();

    RetentionJob(IdempotencyRepository records, PayonceConfig config, Draining draining, MeterRegistry registry) {
        this.records = records;
        this.config = config;
        this.job = new BackgroundJob(draining, RetentionJob.class, "Idempotency cleanup", "Deleted %d expired idempotency records");
        this.deleted = Counter.builder("payonce.idempotency.records.deleted")
                .description("Idempotency records deleted for being older than the retention")
                .register(registry);
        Gauge.builder("payonce.idempotency.retention.lag.seconds", lagSeconds, AtomicLong::get)
                .description("How far past the retention the oldest idempotency record is: 0 while the job keeps up")
                .register(registry);
    }

    @Scheduled(every = "${payonce.idempotency.cleanup-every}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        return job.run(this::deleteExpired, this::measureLag);
    }

    /** Deletes batch after batch until one comes back short or the instance begins to stop; returns how many records it deleted. */
    public Uni<Integer> deleteExpired() {
        int batchSize = config.idempotency().cleanupBatchSize();
        return job.batches(() -> records.deleteOlderThan(config.idempotency().retention(), batchSize), batchSize, deleted);
    }

    private Uni<Void> measureLag() {
        return records.oldestAgeSeconds()
                .invoke(age -> lagSeconds.set(Math.max(0, age - config.idempotency().retention().toSeconds())))
                .replaceWithVoid();
    }
}
