package io.payonce.events;

import com.rabbitmq.client.AMQP;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.payonce.broker.ConfirmedPublisher;
import io.payonce.config.PayonceConfig;
import io.payonce.shutdown.BackgroundJob;
import io.payonce.shutdown.Draining;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Publishes the outbox: the oldest unsent events, in id order, a batch at a time to the events
 * exchange, each marked sent only once the broker has confirmed it and every event before it. Every instance runs
 * it; the row locks make one relay publish at a time. A crash or a broker failure after the
 * confirm and before the COMMIT publishes the event again, with the same event id, as the message
 * id: delivery is at least once, and consumers drop what they have seen. Sent events are deleted
 * after {@code payonce.outbox.retention}, one small batch per run. An instance that is stopping starts
 * no run, and a run ends before its next batch ({@link Draining}).
 */
@Startup
@ApplicationScoped
public class OutboxRelay {

    private final Pool pool;
    private final OutboxRepository events;
    private final ConfirmedPublisher publisher;
    private final String exchange;
    private final PayonceConfig config;
    private final BackgroundJob job;
    private final Counter published;
    private final AtomicLong waiting = new AtomicLong();
    private final AtomicLong oldestSeconds = new AtomicLong();

    OutboxRelay(Pool pool, OutboxRepository events, ConfirmedPublisher publisher, PayonceConfig config, Draining draining,
                MeterRegistry registry) {
        this.pool = pool;
        this.events = events;
        this.publisher = publisher;
        this.exchange = config.outbox().exchange();
        this.config = config;
        this.job = new BackgroundJob(draining, OutboxRelay.class, "Outbox relay", null);
        this.published = Counter.builder("payonce.outbox.published")
                .description("Events the broker confirmed").register(registry);
        Gauge.builder("payonce.outbox.backlog", waiting, AtomicLong::get)
                .description("Events written and not yet confirmed by the broker").register(registry);
        Gauge.builder("payonce.outbox.oldest.seconds", oldestSeconds, AtomicLong::get)
                .description("How long the oldest unsent event has waited").register(registry);
    }

    @Scheduled(every = "${payonce.outbox.relay-every}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        return job.run(this::relay, this::tidy);
    }

    /** Deletes a batch of events sent longer ago than the retention, and measures what waits. */
    private Uni<Void> tidy() {
        return events.deleteSentOlderThan(config.outbox().retention(), config.outbox().batchSize())
                .flatMap(ignored -> events.backlog())
                .invoke(backlog -> {
                    waiting.set(backlog.waiting());
                    oldestSeconds.set(backlog.oldestSeconds());
                })
                .replaceWithVoid();
    }

    /**
     * Publishes batch after batch until one comes back short, or the instance begins to stop; returns
     * how many events the broker confirmed.
     */
    public Uni<Integer> relay() {
        int batchSize = config.outbox().batchSize();
        // Connecting, the slow part of a broker that is away, happens before any row is locked.
        return publisher.connect().flatMap(connected -> job.batches(
                () -> pool.withTransaction(tx -> events.lockUnsent(tx, batchSize).flatMap(batch -> publishAll(tx, batch))),
                batchSize, published));
    }

    /**
     * The batch in the order it was written, one publish with the confirms awaited: the events the
     * broker confirmed, from the first on, are marked sent; the rest waits for the next run, and the
     * batch comes back short so that this run ends. An event the broker took but did not confirm in
     * time goes out again then, under the same event id.
     */
    private Uni<Integer> publishAll(SqlClient tx, List<OutboxRepository.PendingEvent> batch) {
        if (batch.isEmpty()) {
            return Uni.createFrom().item(0);
        }
        return publisher.publish(exchange, batch.stream().map(this::message).toList())
                .flatMap(confirmed -> events.markSent(tx, batch.subList(0, confirmed.count())).replaceWith(confirmed.count()));
    }

    private ConfirmedPublisher.Outgoing message(OutboxRepository.PendingEvent event) {
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder()
                .messageId(event.eventId())
                .contentType("application/json")
                .deliveryMode(ConfirmedPublisher.PERSISTENT)
                .build();
        return new ConfirmedPublisher.Outgoing(exchange, event.type(), properties, event.payload().getBytes(StandardCharsets.UTF_8));
    }
}
