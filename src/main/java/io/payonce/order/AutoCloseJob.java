package io.payonce.order;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.payonce.config.PayonceConfig;
import io.payonce.db.Batches;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

/**
 * Closes UNPAID orders older than {@code payonce.auto-close.delay}. Every instance may run it at
 * once: each batch is one conditional UPDATE, so it and a payment racing for the same order
 * cannot both win.
 */
@Startup
@ApplicationScoped
public class AutoCloseJob {

    private static final Logger LOG = Logger.getLogger(AutoCloseJob.class);

    private final OrderRepository orders;
    private final PayonceConfig config;
    private final Counter closed;

    public AutoCloseJob(OrderRepository orders, PayonceConfig config, MeterRegistry registry) {
        this.orders = orders;
        this.config = config;
        this.closed = Counter.builder("payonce.orders.auto.closed")
                .description("Unpaid orders closed for being older than the auto-close delay")
                .register(registry);
    }

    @Scheduled(every = "${payonce.auto-close.every}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        return closeStaleOrders()
                .onFailure().invoke(e -> LOG.warnf("Auto-close stopped early: %s", e.toString()))
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    /** Closes batch after batch until one comes back short; returns how many orders it closed. */
    public Uni<Integer> closeStaleOrders() {
        int batchSize = config.autoClose().batchSize();
        return Batches.untilShort(() -> orders.closeStaleUnpaid(config.autoClose().delay(), batchSize)
                        .invoke(count -> closed.increment(count)), batchSize)
                .invoke(total -> {
                    if (total > 0) {
                        LOG.infof("Auto-closed %d stale unpaid orders", total);
                    }
                });
    }
}
