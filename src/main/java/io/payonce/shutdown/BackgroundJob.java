package io.payonce.shutdown;

import io.micrometer.core.instrument.Counter;
import io.smallrye.mutiny.Uni;
import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Duration;
import java.util.function.Supplier;

/**
 * The shell every scheduled job of payonce shares (the outbox relay, card recovery, idempotency
 * retention, auto-close), so that each states only its own work. A run begins only while the
 * instance is not stopping, and counts as running work until it ends ({@link Draining}); its
 * batches end once the instance begins to stop, and the rest waits for the next run on an instance
 * that stays. Every job's work is safe to repeat, so a failure ends the run with one warning and the
 * next run, on the job's schedule, takes up what is left; a failure of what follows the run is
 * warned of the same way, never passed over in silence. A store that stays away fails run after run
 * the same way: that failure is warned once, and again every few minutes ({@link RepeatedFailure}),
 * so that a job running every second does not bury the log. A run that neither ends nor fails (a
 * store that stopped answering in the middle of a handshake, say) is given up after
 * {@link #RUN_BOUND}, as a failure: the scheduler skips every run of a job while one is going on, so
 * one run that hung would otherwise stop the job on this instance for good.
 */
public final class BackgroundJob {

    /**
     * The longest a run's pass, or what follows it, may take. Far beyond what a run does (a batch is
     * bounded by its statements' and its calls' own bounds), and short enough that an outbox event
     * or a card payment waits no longer than that for the next run.
     */
    public static final Duration RUN_BOUND = Duration.ofSeconds(30);

    private final Draining draining;
    private final Logger log;
    private final String summary;
    private final Duration bound;
    private final RepeatedFailure passFailure;
    private final RepeatedFailure afterwardsFailure;

    /**
     * @param job     the job's class, whose logger writes its lines
     * @param name    the job as its warning names it
     * @param summary the line a run that did anything writes, a format taking its count; null where the job's meter says enough
     */
    public BackgroundJob(Draining draining, Class<?> job, String name, String summary) {
        this(draining, job, name, summary, RUN_BOUND, Clock.systemUTC());
    }

    BackgroundJob(Draining draining, Class<?> job, String name, String summary, Duration bound, Clock clock) {
        this.draining = draining;
        this.log = Logger.getLogger(job);
        this.summary = summary;
        this.bound = bound;
        this.passFailure = new RepeatedFailure(log, name + " stopped early; the next run takes up the rest", name
                + " went through again, after %d runs that stopped early", clock);
        this.afterwardsFailure = new RepeatedFailure(log, name + ": what follows a run (its gauges, its tidying) failed; the next run tries again",
                name + ": what follows a run went through again, after %d runs", clock);
    }

    /** One scheduled run: {@code pass}, which returns how much it did. */
    public Uni<Void> run(Supplier<Uni<Integer>> pass) {
        return run(pass, () -> Uni.createFrom().voidItem());
    }

    /** One scheduled run: {@code pass}, then, whether it finished or not, {@code afterwards} (the job's gauges, its tidying). */
    public Uni<Void> run(Supplier<Uni<Integer>> pass, Supplier<Uni<?>> afterwards) {
        return draining.unlessStopping(() -> Uni.createFrom().deferred(pass::get)
                .ifNoItem().after(bound).fail()
                .invoke(this::summarise)
                .invoke(passFailure::wentThrough)
                .onFailure().invoke(passFailure::failed)
                .onFailure().recoverWithNull()
                .flatMap(ignored -> Uni.createFrom().deferred(afterwards).ifNoItem().after(bound).fail())
                .invoke(afterwardsFailure::wentThrough)
                .onFailure().invoke(afterwardsFailure::failed)
                .onFailure().recoverWithNull()
                .replaceWithVoid(), () -> Uni.createFrom().voidItem());
    }

    /**
     * Housekeeping in short statements: runs {@code batch} (which returns the rows it touched) until it
     * touches fewer than {@code batchSize}, or the instance begins to stop; counts each batch's rows
     * on {@code touched} as it commits; returns the total.
     */
    public Uni<Integer> batches(Supplier<Uni<Integer>> batch, int batchSize, Counter touched) {
        return batches(batch, batchSize, touched, 0);
    }

    private Uni<Integer> batches(Supplier<Uni<Integer>> batch, int batchSize, Counter touched, int doneSoFar) {
        return Uni.createFrom().deferred(() -> draining.stopping()
                ? Uni.createFrom().item(doneSoFar)
                : batch.get()
                        .invoke(count -> touched.increment(count))
                        .flatMap(count -> count < batchSize
                                ? Uni.createFrom().item(doneSoFar + count)
                                : batches(batch, batchSize, touched, doneSoFar + count)));
    }

    private void summarise(Integer done) {
        if (summary != null && done != null && done > 0) {
            log.infof(summary, done);
        }
    }
}
