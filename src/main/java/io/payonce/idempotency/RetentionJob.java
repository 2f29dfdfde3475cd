package io.payonce.idempotency;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.payonce.config.PayonceConfig;
import io.payonce.db.Batches;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Deletes idempotency records older than {@code payonce.idempotency.retention}, one small batch per
 * statement. A payment whose key has expired still cannot be repeated: the order's status and
 * UNIQUE(pay_record.order_id) refuse it.
 */
@Startup
@ApplicationScoped
public class RetentionJob {

    private static final Logger LOG = Logger.getLogger(RetentionJob.class);

    private final IdempotencyRepository records;
    private final PayonceConfig config;
    private final Counter deleted;
    private final AtomicLong lagSeconds = new AtomicLong();

    RetentionJob(IdempotencyRepository records, PayonceConfig config, MeterRegistry registry) {
        this.records = records;
        this.config = config;
        this.deleted = Counter.builder("payonce.idempotency.records.deleted")
                .description("Idempotency records deleted for being older than the retention")
                .register(registry);
        Gauge.builder("payonce.idempotency.retention.lag.seconds", lagSeconds, AtomicLong::get)
                .description("How far past the retention the oldest idempotency record is: 0 while the job keeps up")
                .register(registry);
    }

    @Scheduled(every = "${payonce.idempotency.cleanup-every}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        return deleteExpired()
                .onFailure().invoke(e -> LOG.warnf("Idempotency cleanup stopped early: %s", e.toString()))
                .onFailure().recoverWithNull()
                .flatMap(ignored -> records.oldestAgeSeconds())
                .invoke(age -> lagSeconds.set(Math.max(0, age - config.idempotency().retention().toSeconds())))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    /** Deletes batch after batch until one comes back short; returns how many records it deleted. */
    public Uni<Integer> deleteExpired() {
        int batchSize = config.idempotency().cleanupBatchSize();
        return Batches.untilShort(() -> records.deleteOlderThan(config.idempotency().retention(), batchSize)
                        .invoke(count -> deleted.increment(count)), batchSize)
                .invoke(total -> {
                    if (total > 0) {
                        LOG.infof("Deleted %d expired idempotency records", total);
                    }
                });
    }
}
