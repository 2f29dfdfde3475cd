package io.payonce.payment.card;

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
 * Finds the card payments nobody is working on (UNKNOWN once their backoff has passed, or STARTED
 * and CHARGE_SENT whose worker's lease ran out: it crashed or stalled) and drives each to its
 * outcome, exactly as the request would have. Safe on every instance at once: a payment is taken
 * by a compare-and-set on its lease, and its outcome is recorded by a compare-and-set on its
 * phase, so two instances never both record one, and the processor's key makes a charge sent twice
 * a charge made once. An instance that is stopping starts no run, and a run takes no payment after
 * the one in hand ({@link Draining}): the rest wait for the next run on an instance that stays.
 */
@Startup
@ApplicationScoped
class CardRecoveryJob {

    /** The job's identity in the scheduler. */
    static final String IDENTITY = "card-recovery";

    /** A card payment unsettled this long after it began is overdue: the gauge operators alert on. */
    private static final Duration OVERDUE = Duration.ofMinutes(1);

    private static final Logger LOG = Logger.getLogger(CardRecoveryJob.class);

    private final Pool pool;
    private final CardPaymentRepository cards;
    private final CardCharges charges;
    private final int batchSize;
    private final Draining draining;
    private final BackgroundJob job;
    private final AtomicLong overdue = new AtomicLong();

    CardRecoveryJob(Pool pool, CardPaymentRepository cards, CardCharges charges, PayonceConfig config, Draining draining,
                    MeterRegistry registry) {
        this.pool = pool;
        this.cards = cards;
        this.charges = charges;
        this.batchSize = config.processor().recoveryBatchSize();
        this.draining = draining;
        this.job = new BackgroundJob(draining, CardRecoveryJob.class, "Card payment recovery", "Recovery took %d card payments to the processor");
        Gauge.builder("payonce.card.payments.overdue", overdue, AtomicLong::get)
                .description("Card payments still not settled a minute after they began (the processor is down or gives no "
                        + "definite answer), as the recovery job last counted")
                .register(registry);
    }

    @Scheduled(identity = IDENTITY, every = "${payonce.processor.recovery-every}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        return job.run(this::recover);
    }

    /** One pass: takes each unattended payment of a batch in turn until the instance begins to stop; returns how many it took. */
    Uni<Integer> recover() {
        return cards.countOverdue(pool, OVERDUE).invoke(overdue::set).flatMap(count -> recoverBatch());
    }

    private Uni<Integer> recoverBatch() {
        return cards.findUnattended(pool, batchSize)
                .onItem().transformToMulti(payments -> Multi.createFrom().iterable(payments))
                .onItem().transformToUniAndConcatenate(payment -> draining.stopping() ? Uni.createFrom().item(0) : cards
                        .takeLease(pool, payment, charges.lease())
                        .flatMap(leased -> leased != null ? charges.resume(leased).replaceWith(1) : Uni.createFrom().item(0))
                        .onFailure().invoke(e -> LOG.warnf("Card payment %d not recovered this time: %s", payment.id(), e.toString()))
                        .onFailure().recoverWithItem(0))
                .collect().with(Collectors.summingInt(Integer::intValue));
    }
}
