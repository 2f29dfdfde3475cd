package io.payonce.events;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.payonce.config.PayonceConfig;
import io.payonce.db.Batches;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.MutinyEmitter;
import io.smallrye.reactive.messaging.rabbitmq.OutgoingRabbitMQMetadata;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.reactive.messaging.Channel;
import org.eclipse.microprofile.reactive.messaging.Message;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Publishes the outbox: the oldest unsent events, in id order, each to the events exchange with
 * the broker's publisher confirm awaited, each marked sent only once confirmed. Every instance runs
 * it; the row locks make one relay publish at a time. A crash or a broker failure after the
 * confirm and before the COMMIT publishes the event again, with the same event id, as the message
 * id: delivery is at least once, and consumers drop what they have seen. Sent events are deleted
 * after {@code payonce.outbox.retention}, one small batch per run.
 */
@Startup
@ApplicationScoped
public class OutboxRelay {

    private static final Logger LOG = Logger.getLogger(OutboxRelay.class);
    static final String CHANNEL = "payonce-events";
    /** A confirm slower than this is a broker in trouble: the event stays unsent for the next run. */
    private static final Duration CONFIRM_TIMEOUT = Duration.ofSeconds(2);

    private final Pool pool;
    private final OutboxRepository events;
    private final MutinyEmitter<String> exchange;
    private final PayonceConfig config;
    private final Counter published;
    private final AtomicLong waiting = new AtomicLong();
    private final AtomicLong oldestSeconds = new AtomicLong();

    OutboxRelay(Pool pool, OutboxRepository events, @Channel(CHANNEL) MutinyEmitter<String> exchange, PayonceConfig config,
                MeterRegistry registry) {
        this.pool = pool;
        this.events = events;
        this.exchange = exchange;
        this.config = config;
        this.published = Counter.builder("payonce.outbox.published")
                .description("Events the broker confirmed").register(registry);
        Gauge.builder("payonce.outbox.backlog", waiting, AtomicLong::get)
                .description("Events written and not yet confirmed by the broker").register(registry);
        Gauge.builder("payonce.outbox.oldest.seconds", oldestSeconds, AtomicLong::get)
                .description("How long the oldest unsent event has waited").register(registry);
    }

    @Scheduled(every = "${payonce.outbox.relay-every}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        return relay()
                .onFailure().invoke(e -> LOG.warnf("Outbox relay stopped early; unsent events wait for the next run: %s", e.toString()))
                .onFailure().recoverWithNull()
                .flatMap(ignored -> events.deleteSentOlderThan(config.outbox().retention(), config.outbox().batchSize()))
                .flatMap(ignored -> events.backlog())
                .invoke(backlog -> {
                    waiting.set(backlog.waiting());
                    oldestSeconds.set(backlog.oldestSeconds());
                })
                .onFailure().recoverWithNull()
                .replaceWithVoid();
    }

    /** Publishes batch after batch until one comes back short; returns how many events the broker confirmed. */
    public Uni<Integer> relay() {
        int batchSize = config.outbox().batchSize();
        return Batches.untilShort(() -> pool.withTransaction(tx -> events.lockUnsent(tx, batchSize)
                .flatMap(batch -> publishInOrder(tx, batch, 0))), batchSize);
    }

    /**
     * One event after the other, so that they leave in the order they were written. A publish that
     * fails ends the batch: what was confirmed before it commits as sent, the rest waits.
     */
    private Uni<Integer> publishInOrder(SqlClient tx, List<OutboxRepository.PendingEvent> batch, int index) {
        if (index == batch.size()) {
            return Uni.createFrom().item(index);
        }
        OutboxRepository.PendingEvent event = batch.get(index);
        return publish(event)
                .flatMap(confirmed -> events.markSent(tx, event.id()))
                .invoke(() -> published.increment())
                .flatMap(sent -> publishInOrder(tx, batch, index + 1))
                .onFailure().recoverWithItem(failure -> {
                    LOG.warnf("Event %s not confirmed, left for the next run: %s", event.eventId(), failure.toString());
                    return index;
                });
    }

    private Uni<Void> publish(OutboxRepository.PendingEvent event) {
        OutgoingRabbitMQMetadata properties = OutgoingRabbitMQMetadata.builder()
                .withMessageId(event.eventId())
                .withRoutingKey(event.type())
                .withContentType("application/json")
                .withDeliveryMode(2)
                .build();
        return exchange.sendMessage(Message.of(event.payload()).addMetadata(properties))
                .ifNoItem().after(CONFIRM_TIMEOUT).fail();
    }
}
