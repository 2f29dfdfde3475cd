package io.payonce.commands.settlement;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.payonce.commands.outcome.OnceRule;
import io.payonce.config.PayonceConfig;
import io.payonce.db.DependencyFailure;
import io.payonce.shutdown.BackgroundJob;
import io.payonce.shutdown.Draining;
import io.quarkus.scheduler.Scheduled;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;

/**
 * The marks in MariaDB ({@code command_requeue}), keyed by the command's broker-checked sender and
 * its message-id. One INSERT IGNORE both reads and leaves the mark, so two
 * instances that hold copies of one command never both take it for a first time. A mark is kept as
 * long as the command's answer ({@code payonce.idempotency.retention}), then deleted in small
 * batches: the same command sent again meanwhile (a dead letter replayed) has had its one requeue
 * of that rule, as its key has its answer, and ops read when it had it in {@code command_requeue}.
 */
@ApplicationScoped
public class StoredRequeueMarks implements RequeueMarks {

    private static final Logger LOG = Logger.getLogger(StoredRequeueMarks.class);

    private static final String MARK = "INSERT IGNORE INTO command_requeue (sender, message_id, rule_name) VALUES (?, ?, ?)";

    private static final String DELETE_EXPIRED = """
            DELETE FROM command_requeue
            WHERE requeued_at < NOW(6) - INTERVAL ? SECOND
            ORDER BY requeued_at
            LIMIT ?""";

    /** What the columns hold, whole: a sender or message-id outside it has no mark, and falls back to the broker's flag. */
    private static final Pattern KEEPABLE = Pattern.compile("[\\x21-\\x7E]{1,255}");

    /** How long a mark may take; a store slower than that is a store down for the rule. */
    static final Duration BOUND = Duration.ofSeconds(2);

    private final Pool pool;
    private final PayonceConfig config;
    private final Draining draining;
    private final BackgroundJob job;
    private final Counter deleted;

    StoredRequeueMarks(Pool pool, PayonceConfig config, Draining draining, MeterRegistry registry) {
        this.pool = pool;
        this.config = config;
        this.draining = draining;
        this.job = new BackgroundJob(draining, StoredRequeueMarks.class, "Requeue marks cleanup", "Deleted %d expired requeue marks");
        this.deleted = Counter.builder("payonce.commands.requeue.marks.deleted")
                .description("Marks of commands sent back to the queue once, deleted for being older than the retention")
                .register(registry);
    }

    @Override
    public Uni<Meeting> meet(IncomingRabbitMQMetadata amqp, OnceRule rule) {
        String sender = amqp.getUserId().filter(KEEPABLE.asMatchPredicate()).orElse(null);
        String messageId = amqp.getMessageId().filter(KEEPABLE.asMatchPredicate()).orElse(null);
        if (sender == null || messageId == null) {
            return Uni.createFrom().item(byTheFlag(amqp));
        }
        return pool.preparedQuery(MARK).execute(Tuple.of(sender, messageId, rule.name()))
                .ifNoItem().after(BOUND).fail()
                .map(rows -> rows.rowCount() == 1 ? Meeting.FIRST : Meeting.AGAIN)
                .onFailure().recoverWithItem(unmarked -> {
                    // A store down or slow, or the pool closed by a stop: the command waits as for a store, its rule
                    // not used up. Anything else (the table missing) would never heal, and the flag bounds it.
                    boolean transientFault = DependencyFailure.isTransient(unmarked) || unmarked instanceof TimeoutException
                            || draining.stopping();
                    LOG.warnf("Command %s: no requeue mark for %s (%s)", messageId, rule, unmarked.toString());
                    return transientFault ? Meeting.UNKNOWN : byTheFlag(amqp);
                });
    }

    private static Meeting byTheFlag(IncomingRabbitMQMetadata amqp) {
        return amqp.isRedeliver() ? Meeting.AGAIN : Meeting.FIRST;
    }

    @Scheduled(every = "${payonce.idempotency.cleanup-every}", concurrentExecution = Scheduled.ConcurrentExecution.SKIP)
    Uni<Void> scheduled() {
        return job.run(this::deleteExpired);
    }

    /** Deletes batch after batch until one comes back short or the instance begins to stop; returns how many marks it deleted. */
    Uni<Integer> deleteExpired() {
        int batchSize = config.idempotency().cleanupBatchSize();
        return job.batches(() -> pool.preparedQuery(DELETE_EXPIRED)
                .execute(Tuple.of(config.idempotency().retention().toSeconds(), batchSize))
                .map(rows -> rows.rowCount()), batchSize, deleted);
    }
}
