package io.payonce.payment.operation;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.payonce.config.PayonceConfig;
import io.payonce.processor.ProcessorOutcome;
import io.payonce.shutdown.BackgroundJob;
import io.payonce.shutdown.Draining;
import io.quarkus.arc.All;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

/**
 * The one janitor of every kind of operation at the processor: finds the operations nobody is
 * working on (UNKNOWN once their backoff has passed, or STARTED and SENT whose worker's lease ran
 * out: it crashed or stalled) and drives each to its outcome through {@link Lifecycle#advance},
 * exactly as the request would have. Safe on every instance at once: the lease and the outcome are
 * each taken by compare-and-set, and the processor's key makes an operation sent twice one made
 * once. An instance that is stopping starts no run, and a run takes no operation after the one in
 * hand ({@link Draining}): the rest wait for the next run on an instance that stays.
 */
@Startup
@ApplicationScoped
public class RecoveryJob {

    /** The job's identity in the scheduler. */
    public static final String IDENTITY = "processor-recovery";

    /** An operation unsettled this long after it began is overdue: the gauges operators alert on. */
    private static final Duration OVERDUE = Duration.ofMinutes(1);

    /** Each kind's part of a run ends within the run's own bound, so that a kind that hangs is given up alone. */
    private static final Duration KIND_BOUND = BackgroundJob.RUN_BOUND.minusSeconds(5);

    private static final Logger LOG = Logger.getLogger(RecoveryJob.class);

    private final Pool pool;
    private final Lifecycle lifecycle;
    private final List<Kind> kinds;
    private final int batchSize;
    private final Draining draining;
    private final BackgroundJob job;

    RecoveryJob(Pool pool, Lifecycle lifecycle, @All List<OperationKind<?, ?, ?>> kinds, PayonceConfig config, Draining draining,
                MeterRegistry registry) {
        this.pool = pool;
        this.lifecycle = lifecycle;
        this.kinds = kinds.stream().map(kind -> new Kind(kind, new AtomicLong())).toList();
        this.batchSize = config.processor().recoveryBatchSize();
        this.draining = draining;
        this.job = new BackgroundJob(draining, RecoveryJob.class, "Processor recovery", "Recovery took %d operations to the processor");
        this.kinds.forEach(each -> Gauge.builder(each.kind().words.overdueGauge(), each.overdue(), AtomicLong::get)
                .description(each.kind().words.overdueDescription()).register(registry));
    }

    @Scheduled(identity = IDENTITY, every = "${payonce.processor.recovery-every}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        return job.run(this::recover);
    }

    /**
     * One pass: every kind at once, each on its own, so that one whose processor calls hang, or whose
     * table fails to answer, neither holds the others back nor stops their overdue gauges; returns how
     * many operations it took to the processor.
     */
    public Uni<Integer> recover() {
        return Uni.join().all(kinds.stream().map(this::recoverAlone).toList()).andFailFast()
                .map(taken -> taken.stream().mapToInt(Integer::intValue).sum());
    }

    /** One kind's part of a pass, bounded within the run's own bound; a failure is warned of and ends that part alone. */
    private Uni<Integer> recoverAlone(Kind each) {
        return recover(each.kind(), each.overdue())
                .ifNoItem().after(KIND_BOUND).fail()
                .onFailure().invoke(e -> LOG.warnf("%s recovery gave up this run: %s", each.kind().words.name(), e.toString()))
                .onFailure().recoverWithItem(0);
    }

    private <O extends Operation<O>, R extends ProcessorOutcome> Uni<Integer> recover(OperationKind<O, R, ?> kind, AtomicLong overdue) {
        return kind.rows.countOverdue(pool, OVERDUE).invoke(overdue::set).flatMap(count -> recoverBatch(kind));
    }

    /** Takes each unattended operation of a batch in turn until the instance begins to stop. */
    private <O extends Operation<O>, R extends ProcessorOutcome> Uni<Integer> recoverBatch(OperationKind<O, R, ?> kind) {
        return kind.rows.findUnattended(pool, batchSize)
                .onItem().transformToMulti(unattended -> Multi.createFrom().iterable(unattended))
                .onItem().transformToUniAndConcatenate(operation -> draining.stopping() ? Uni.createFrom().item(0) : lifecycle
                        .takeOver(kind, operation)
                        .map(answer -> answer != null ? 1 : 0)
                        .onFailure().invoke(e -> LOG.warnf("%s %d not recovered this time: %s", kind.words.name(), operation.id(), e.toString()))
                        .onFailure().recoverWithItem(0))
                .collect().with(Collectors.summingInt(Integer::intValue));
    }

    /** A kind, and its overdue operations as the job last counted them. */
    private record Kind(OperationKind<?, ?, ?> kind, AtomicLong overdue) {
    }
}
