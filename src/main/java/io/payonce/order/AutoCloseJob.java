package io.payonce.order;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.payonce.config.PayonceConfig;
import io.payonce.shutdown.BackgroundJob;
import io.payonce.shutdown.Draining;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Closes orders UNPAID for longer than {@code payonce.auto-close.delay}, counted from their last move
 * to UNPAID: their creation, or a card payment that gave them back (declined, or settled not charged
 * by an operator), so that the client's pay with a new key finds the order still payable however
 * late the decline came. Every instance may run it at once: each batch is one conditional UPDATE, so
 * it and a payment racing for the same order cannot both win.
 */
@Startup
@ApplicationScoped
public class AutoCloseJob {

    private final OrderRepository orders;
    private final PayonceConfig config;
    private final BackgroundJob job;
    private final Counter closed;

    public AutoCloseJob(OrderRepository orders, PayonceConfig config, Draining draining, MeterRegistry registry) {
        this.orders = orders;
        this.config = config;
        this.job = new BackgroundJob(draining, AutoCloseJob.class, "Auto-close", "Auto-closed %d stale unpaid orders");
        this.closed = Counter.builder("payonce.orders.auto.closed")
                .description("Orders closed for being UNPAID for longer than the auto-close delay")
                .register(registry);
    }

    @Scheduled(every = "${payonce.auto-close.every}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        return job.run(this::closeStaleOrders);
    }

    /** Closes batch after batch until one comes back short or the instance begins to stop; returns how many orders it closed. */
    public Uni<Integer> closeStaleOrders() {
        int batchSize = config.autoClose().batchSize();
        return job.batches(() -> orders.closeStaleUnpaid(config.autoClose().delay(), batchSize), batchSize, closed);
    }
}
