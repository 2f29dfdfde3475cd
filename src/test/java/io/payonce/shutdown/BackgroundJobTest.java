package io.payonce.shutdown;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.payonce.support.MovableClock;
import io.quarkus.runtime.ShutdownDelayInitiatedEvent;
import io.smallrye.mutiny.Uni;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The shell of the scheduled jobs: when a run begins, how its batches end, and that a failure ends only the run. */
class BackgroundJobTest {

    private static final Duration WAIT = Duration.ofSeconds(5);

    private final Draining draining = new Draining(Optional.of(Duration.ofSeconds(1)));
    private final MovableClock clock = new MovableClock();
    private final BackgroundJob job = new BackgroundJob(draining, BackgroundJobTest.class, "Test job", "Did %d things", BackgroundJob.RUN_BOUND, clock);
    private final Counter touched = new SimpleMeterRegistry().counter("touched");

    @Test
    void batchesRunUntilOneComesBackShortAndEachIsCounted() {
        List<Integer> sizes = new ArrayList<>(List.of(2, 2, 1, 2));

        int total = job.batches(() -> Uni.createFrom().item(sizes.remove(0)), 2, touched).await().atMost(WAIT);

        assertEquals(5, total);
        assertEquals(5, touched.count());
        assertEquals(List.of(2), sizes, "no batch after the short one");
    }

    @Test
    void batchesEndOnceTheInstanceBeginsToStop() {
        AtomicInteger batches = new AtomicInteger();

        int total = job.batches(() -> {
            if (batches.incrementAndGet() == 2) {
                draining.delayBegins(new ShutdownDelayInitiatedEvent());
            }
            return Uni.createFrom().item(2);
        }, 2, touched).await().atMost(WAIT);

        assertEquals(2, batches.get(), "the batch in hand when the stop began ends, and no other begins");
        assertEquals(4, total);
    }

    @Test
    void noRunBeginsOnceTheInstanceIsStopping() {
        draining.delayBegins(new ShutdownDelayInitiatedEvent());
        AtomicBoolean ran = new AtomicBoolean();

        job.run(() -> {
            ran.set(true);
            return Uni.createFrom().item(1);
        }).await().atMost(WAIT);

        assertFalse(ran.get());
    }

    /** A pass that never ends (a store gone silent mid-handshake) would hold the job for good: the scheduler skips runs while one goes on. */
    @Test
    void aRunThatHangsIsGivenUpAtItsBoundAndWhatComesAfterwardsStillRuns() {
        BackgroundJob bounded = new BackgroundJob(draining, BackgroundJobTest.class, "Test job", null, Duration.ofMillis(200), clock);
        AtomicBoolean measured = new AtomicBoolean();

        bounded.run(() -> Uni.createFrom().nothing(), () -> Uni.createFrom().item(() -> {
            measured.set(true);
            return null;
        })).await().atMost(WAIT);
        bounded.run(() -> Uni.createFrom().item(1), () -> Uni.createFrom().nothing()).await().atMost(WAIT);

        assertTrue(measured.get(), "what follows the run ran once the pass was given up");
    }

    @Test
    void aFailedPassEndsTheRunQuietlyAndWhatComesAfterwardsStillRuns() {
        AtomicBoolean measured = new AtomicBoolean();

        job.run(() -> Uni.createFrom().failure(new IllegalStateException("the database went away")),
                () -> Uni.createFrom().item(() -> {
                    measured.set(true);
                    return null;
                })).await().atMost(WAIT);

        assertTrue(measured.get());
    }

    @Test
    void aFailureOfWhatComesAfterwardsIsWarnedNamingTheJob() {
        List<String> warnings = logged(Level.WARNING, () -> job.run(() -> Uni.createFrom().item(0),
                () -> Uni.createFrom().failure(new IllegalStateException("the gauge's query failed"))).await().atMost(WAIT));

        assertEquals(1, warnings.size(), warnings.toString());
        assertTrue(warnings.get(0).contains("WARN Test job") && warnings.get(0).contains("the gauge's query failed"), warnings.get(0));
    }

    /** A broker away for a minute fails a relay run every second: one warning says so, not sixty. */
    @Test
    void theSameFailureRunAfterRunIsWarnedOnceAndTheRunThatGoesThroughAgainIsTold() {
        List<String> lines = logged(Level.INFO, () -> {
            for (String because : List.of("the broker is away", "the broker is away", "the broker is away", "the database is away")) {
                failedRun(because);
            }
            job.run(() -> Uni.createFrom().item(0)).await().atMost(WAIT);
            job.run(() -> Uni.createFrom().item(0)).await().atMost(WAIT);
            failedRun("the broker is away");
        });

        assertEquals(List.of(
                "WARN Test job stopped early; the next run takes up the rest: java.lang.IllegalStateException: the broker is away",
                "WARN Test job stopped early; the next run takes up the rest: java.lang.IllegalStateException: the database is away",
                "INFO Test job went through again, after 4 runs that stopped early",
                "WARN Test job stopped early; the next run takes up the rest: java.lang.IllegalStateException: the broker is away"), lines);
    }

    /** An alert sends the operator to the logs minutes after the failure began: it is warned again while it lasts, among recent lines. */
    @Test
    void aFailureThatLastsIsWarnedAgainEveryFewMinutes() {
        List<String> lines = logged(Level.INFO, () -> {
            failedRun("the broker is away");
            clock.advance(RepeatedFailure.REMINDER.minusSeconds(1));
            failedRun("the broker is away");
            clock.advance(1);
            failedRun("the broker is away");
            failedRun("the broker is away");
        });

        assertEquals(List.of(
                "WARN Test job stopped early; the next run takes up the rest: java.lang.IllegalStateException: the broker is away",
                "WARN Test job stopped early; the next run takes up the rest, 3 runs in a row: java.lang.IllegalStateException: the broker is away"),
                lines);
    }

    /** The relay's gauges read the database after every run: with the database away, that fails every second too. */
    @Test
    void whatComesAfterwardsFailingRunAfterRunIsWarnedOnce() {
        List<String> lines = logged(Level.INFO, () -> {
            for (int run = 0; run < 3; run++) {
                job.run(() -> Uni.createFrom().item(0), () -> Uni.createFrom().failure(new IllegalStateException("the database is away")))
                        .await().atMost(WAIT);
            }
            job.run(() -> Uni.createFrom().item(0), () -> Uni.createFrom().voidItem()).await().atMost(WAIT);
        });

        assertEquals(List.of(
                "WARN Test job: what follows a run (its gauges, its tidying) failed; the next run tries again: "
                        + "java.lang.IllegalStateException: the database is away",
                "INFO Test job: what follows a run went through again, after 3 runs"), lines);
    }

    private void failedRun(String because) {
        job.run(() -> Uni.createFrom().failure(new IllegalStateException(because))).await().atMost(WAIT);
    }

    /** The lines {@code runs} logs through the job's logger at {@code least} or above, each as WARN or INFO and its text. */
    private static List<String> logged(Level least, Runnable runs) {
        List<String> lines = new CopyOnWriteArrayList<>();
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord record) {
                if (record.getLevel().intValue() >= least.intValue()) {
                    lines.add((record.getLevel().intValue() >= Level.WARNING.intValue() ? "WARN " : "INFO ") + String.format(record.getMessage(), record.getParameters()));
                }
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        Logger log = Logger.getLogger(BackgroundJobTest.class.getName());
        log.addHandler(capture);
        try {
            runs.run();
        } finally {
            log.removeHandler(capture);
        }
        return lines;
    }
}
