package io.payonce.events;

import com.rabbitmq.client.AMQP;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.payonce.broker.ConfirmedPublisher;
import io.payonce.config.PayonceConfig;
import io.payonce.events.OutboxRepository.PendingEvent;
import io.payonce.shutdown.BackgroundJob;
import io.payonce.shutdown.Draining;
import io.quarkus.runtime.Startup;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Publishes the outbox: the oldest unsent events, in id order, a batch at a time to the events
 * exchange, each marked sent only once the broker has confirmed it and every event before it. Every instance runs
 * it; the row locks make one relay publish at a time. A crash or a broker failure after the
 * confirm and before the COMMIT publishes the event again, with the same event id, as the message
 * id: delivery is at least once, and consumers drop what they have seen. Sent events are deleted
 * after {@code payonce.outbox.retention}, one small batch per run. An instance that is stopping starts
 * no run, and a run ends before its next batch ({@link Draining}).
 *
 * <p>An event the broker refuses (it closes the channel on that message, 406 PRECONDITION_FAILED: over
 * its max_message_size, say) is found and tried alone, once per run, while the events behind it wait
 * unsent; after {@code payonce.outbox.park-after-refusals} refusals it is parked, as soon as the broker
 * takes the event behind it, and the rest goes on in id order. A nack is no refusal of the event: the
 * broker refuses for now (a full queue that rejects what overflows it nacks every event routed to it),
 * and it is waited for in order, as a broker that is away, never parked.
 *
 * <p>{@code payonce_outbox_runs_total{outcome}} counts the scheduled runs as they end: {@code done}, or
 * {@code failed} (the broker away, blocking publishers or nacking the oldest event, a database error
 * such as a lock wait or a cluster's certification conflict, or a run given up at its bound; the
 * run's warning says which). A relay failing run after run shows on a graph, and a test
 * sees that runs have happened instead of guessing how long they take.
 */
@Startup
@ApplicationScoped
public class OutboxRelay {

    private static final Logger LOG = Logger.getLogger(OutboxRelay.class);
    /** The meter of the relay's scheduled runs, tagged {@code outcome}: {@code done} or {@code failed}. */
    public static final String RUNS = "payonce.outbox.runs";

    private final Pool pool;
    private final OutboxRepository events;
    private final ConfirmedPublisher publisher;
    private final String exchange;
    private final PayonceConfig config;
    private final BackgroundJob job;
    private final Counter published;
    private final Counter runsDone;
    private final Counter runsFailed;
    private final AtomicLong waiting = new AtomicLong();
    private final AtomicLong parked = new AtomicLong();
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
        this.runsDone = runs(registry, "done");
        this.runsFailed = runs(registry, "failed");
        Gauge.builder("payonce.outbox.backlog", waiting, AtomicLong::get)
                .description("Events written and not yet confirmed by the broker, the parked ones apart").register(registry);
        Gauge.builder("payonce.outbox.parked", parked, AtomicLong::get)
                .description("Events the broker kept refusing, set aside until an operator sends them again").register(registry);
        Gauge.builder("payonce.outbox.oldest.seconds", oldestSeconds, AtomicLong::get)
                .description("How long the oldest unsent event has waited").register(registry);
    }

    @Scheduled(every = "${payonce.outbox.relay-every}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        return job.run(this::countedRelay, this::tidy);
    }

    /**
     * {@link #relay}, counted once it ends however it ends; a run given up at its bound is cancelled,
     * and counts as failed. Counted before the run's tidying, so the next run begins after the count.
     */
    private Uni<Integer> countedRelay() {
        // A run whose item arrives as its bound cancels it would otherwise be counted both ways.
        AtomicBoolean counted = new AtomicBoolean();
        return relay().onTermination().invoke((confirmed, failure, cancelled) -> {
            if (counted.compareAndSet(false, true)) {
                (failure == null && !cancelled ? runsDone : runsFailed).increment();
            }
        });
    }

    private static Counter runs(MeterRegistry registry, String outcome) {
        return Counter.builder(RUNS)
                .description("Scheduled relay runs, by how they ended")
                .tag("outcome", outcome)
                .register(registry);
    }

    /** Deletes a batch of events sent longer ago than the retention, and measures what waits. */
    private Uni<Void> tidy() {
        return events.deleteSentOlderThan(config.outbox().retention(), config.outbox().batchSize())
                .flatMap(ignored -> events.backlog())
                .invoke(backlog -> {
                    waiting.set(backlog.waiting());
                    parked.set(backlog.parked());
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
     * broker confirmed, from the first on, are marked sent. An event the broker took but did not
     * confirm in time goes out again on the next run, under the same event id, with the rest of the
     * batch; one it refused is looked for among the rest ({@link #oneByOne}). A first event refused
     * before goes alone ({@link #refusedBefore}), and the rest waits behind it without being sent again.
     * Returns how many were confirmed, short of the batch when anything is left for the next run.
     */
    private Uni<Integer> publishAll(SqlClient tx, List<PendingEvent> batch) {
        if (batch.isEmpty()) {
            return Uni.createFrom().item(0);
        }
        if (batch.get(0).refusals() > 0) {
            return refusedBefore(tx, batch);
        }
        return publisher.publish(exchange, batch.stream().map(this::message).toList()).flatMap(confirmed -> {
            Uni<Void> marked = events.markSent(tx, batch.subList(0, confirmed.count()));
            return confirmed.refused()
                    ? marked.flatMap(sent -> oneByOne(tx, batch.subList(confirmed.count(), batch.size()))).map(more -> confirmed.count() + more)
                    : marked.replaceWith(confirmed.count());
        });
    }

    /**
     * {@link #publishAll} behind what this run has counted, parked or marked so far: a broker that does
     * not confirm them in time ends the run with that committed, as {@link #alone} does, rather than
     * rolling it back and sending the same event again next run.
     */
    private Uni<Integer> publishAllAfter(SqlClient tx, List<PendingEvent> batch) {
        return publishAll(tx, batch).onFailure(ConfirmedPublisher.NotConfirmed.class).recoverWithItem(0);
    }

    /**
     * After the broker refused one of {@code rest}, each published alone until one is refused by
     * itself: its refusal is counted then, never an innocent neighbour's (a broker that closes the
     * channel on a message too large does not say which one it was).
     */
    private Uni<Integer> oneByOne(SqlClient tx, List<PendingEvent> rest) {
        if (rest.isEmpty()) {
            return Uni.createFrom().item(0);
        }
        PendingEvent event = rest.get(0);
        List<PendingEvent> behind = rest.subList(1, rest.size());
        return alone(event).flatMap(confirmed -> {
            if (confirmed.count() == 1) {
                return events.markSent(tx, List.of(event)).flatMap(sent -> oneByOne(tx, behind)).map(more -> more + 1);
            }
            return confirmed.refused() ? refused(tx, event, confirmed.refusal(), behind) : Uni.createFrom().item(0);
        });
    }

    /** The first event of the batch, refused before, published alone again: taken, it is sent and the batch goes on. */
    private Uni<Integer> refusedBefore(SqlClient tx, List<PendingEvent> batch) {
        PendingEvent event = batch.get(0);
        List<PendingEvent> behind = batch.subList(1, batch.size());
        return alone(event).flatMap(confirmed -> {
            if (confirmed.count() == 1) {
                return events.markSent(tx, List.of(event)).flatMap(sent -> publishAllAfter(tx, behind)).map(more -> more + 1);
            }
            return confirmed.refused() ? refused(tx, event, confirmed.refusal(), behind) : Uni.createFrom().item(0);
        });
    }

    /**
     * {@code event}, published alone, was refused: the refusal is counted, and the event waits for the
     * next run with the events {@code behind} it, unless it has now been refused
     * {@code park-after-refusals} times: then the event behind it is published alone, and if the broker
     * takes that one, the refused event is parked and the rest goes on; if not, both wait.
     */
    private Uni<Integer> refused(SqlClient tx, PendingEvent event, String refusal, List<PendingEvent> behind) {
        Uni<Void> counted = countRefusal(tx, event, refusal);
        if (event.refusals() + 1 < config.outbox().parkAfterRefusals() || behind.isEmpty()) {
            return counted.replaceWith(0);
        }
        return counted.flatMap(ignored -> parkIfTheNextIsTaken(tx, event, refusal, behind));
    }

    /** {@code refused} is parked if the broker takes the first of {@code behind}, published alone; then the rest goes on. */
    private Uni<Integer> parkIfTheNextIsTaken(SqlClient tx, PendingEvent refused, String refusal, List<PendingEvent> behind) {
        PendingEvent next = behind.get(0);
        return alone(next).flatMap(confirmed -> {
            if (confirmed.count() == 1) {
                return events.park(tx, refused)
                        .invoke(() -> LOG.errorf("Event %s (%s) parked: the broker refused it %d times and takes the events behind it;"
                                + " they go on. Last refusal: %s", refused.eventId(), refused.type(), refused.refusals() + 1, refusal))
                        .flatMap(parkedOne -> events.markSent(tx, List.of(next)))
                        .flatMap(sent -> publishAllAfter(tx, behind.subList(1, behind.size())))
                        .map(more -> more + 1);
            }
            // Counted, never parked from here: a broker refusing two events in a row may be refusing them all.
            return confirmed.refused() ? countRefusal(tx, next, confirmed.refusal()).replaceWith(0) : Uni.createFrom().item(0);
        });
    }

    /**
     * One event alone; a broker that does not confirm it in time ends the run here, with what the
     * transaction has marked so far committed.
     */
    private Uni<ConfirmedPublisher.Confirmed> alone(PendingEvent event) {
        return publisher.publish(exchange, List.of(message(event)))
                .onFailure(ConfirmedPublisher.NotConfirmed.class).recoverWithItem(new ConfirmedPublisher.Confirmed(0, 1, null));
    }

    private Uni<Void> countRefusal(SqlClient tx, PendingEvent event, String refusal) {
        LOG.warnf("Event %s (%s) refused by the broker, %d times so far (parked from %d, once the broker takes the event behind it): %s",
                event.eventId(), event.type(), event.refusals() + 1, config.outbox().parkAfterRefusals(), refusal);
        return events.countRefusal(tx, event, refusal);
    }

    private ConfirmedPublisher.Outgoing message(PendingEvent event) {
        AMQP.BasicProperties properties = new AMQP.BasicProperties.Builder()
                .messageId(event.eventId())
                .contentType("application/json")
                .deliveryMode(ConfirmedPublisher.PERSISTENT)
                .build();
        return new ConfirmedPublisher.Outgoing(exchange, event.type(), properties, event.payload().getBytes(StandardCharsets.UTF_8));
    }
}
