package io.payonce.payment.refund;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.payonce.config.PayonceConfig;
import io.payonce.shutdown.BackgroundJob;
import io.payonce.shutdown.Draining;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

/**
 * Finds the refunds to the card nobody is working on (UNKNOWN once their backoff has passed, or
 * STARTED and SENT whose worker's lease ran out: it crashed or stalled) and drives each to its
 * outcome, exactly as the request would have. Safe on every instance at once, as the card payments'
 * job is: a refund is taken by a compare-and-set on its lease, its outcome recorded by a
 * compare-and-set on its phase, and the processor's key makes a refund sent twice a refund made once.
 * An instance that is stopping starts no run, and a run takes no refund after the one in hand.
 */
@Startup
@ApplicationScoped
class CardRefundRecoveryJob {

    /** The job's identity in the scheduler. */
    static final String IDENTITY = "card-refund-recovery";

    /** A refund to the card unsettled this long after it began is overdue: the gauge operators alert on. */
    private static final Duration OVERDUE = Duration.ofMinutes(1);

    private static final Logger LOG = Logger.getLogger(CardRefundRecoveryJob.class);

    private final Pool pool;
    private final CardRefundRepository cardRefunds;
    private final CardRefunds toCards;
    private final int batchSize;
    private final Draining draining;
    private final BackgroundJob job;
    private final AtomicLong overdue = new AtomicLong();

    CardRefundRecoveryJob(Pool pool, CardRefundRepository cardRefunds, CardRefunds toCards, PayonceConfig config, Draining draining,
                          MeterRegistry registry) {
        this.pool = pool;
        this.cardRefunds = cardRefunds;
        this.toCards = toCards;
        this.batchSize = config.processor().recoveryBatchSize();
        this.draining = draining;
        this.job = new BackgroundJob(draining, CardRefundRecoveryJob.class, "Card refund recovery",
                "Recovery took %d card refunds to the processor");
        Gauge.builder("payonce.card.refunds.overdue", overdue, AtomicLong::get)
                .description("Refunds to the card still not settled a minute after they began (the processor is down or gives no "
                        + "definite answer), as the recovery job last counted")
                .register(registry);
    }

    @Scheduled(identity = IDENTITY, every = "${payonce.processor.recovery-every}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        return job.run(this::recover);
    }

    /** One pass: takes each unattended refund of a batch in turn until the instance begins to stop; returns how many it took. */
    Uni<Integer> recover() {
        return cardRefunds.countOverdue(pool, OVERDUE).invoke(overdue::set).flatMap(count -> recoverBatch());
    }

    private Uni<Integer> recoverBatch() {
        return cardRefunds.findUnattended(pool, batchSize)
                .onItem().transformToMulti(refunds -> Multi.createFrom().iterable(refunds))
                .onItem().transformToUniAndConcatenate(refund -> draining.stopping() ? Uni.createFrom().item(0) : cardRefunds
                        .takeLease(pool, refund, toCards.lease())
                        .flatMap(taken -> taken ? toCards.resume(refund.oneMoreAttempt()).replaceWith(1) : Uni.createFrom().item(0))
                        .onFailure().invoke(e -> LOG.warnf("Card refund %d not recovered this time: %s", refund.id(), e.toString()))
                        .onFailure().recoverWithItem(0))
                .collect().with(Collectors.summingInt(Integer::intValue));
    }
}
