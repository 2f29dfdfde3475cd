package io.payonce.shutdown;

import io.quarkus.runtime.ShutdownDelayInitiatedEvent;
import io.quarkus.runtime.ShutdownEvent;
import io.smallrye.mutiny.Uni;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.interceptor.Interceptor;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

/**
 * The work an instance does beyond answering a request (commands from the queue, the scheduled jobs
 * of {@link BackgroundJob}, and a write that goes on after its client hung up) and the instance's stop.
 * Quarkus drains HTTP by itself: on SIGTERM readiness goes DOWN for {@code quarkus.shutdown.delay}
 * while requests are still served, then in-flight requests get up to {@code quarkus.shutdown.timeout}
 * to answer. It knows nothing of the rest, and would close the database pool and the broker channel
 * under a command, a batch or a detached write half done.
 *
 * <p>So from the first moment of the stop (the delay's start, or the shutdown itself when there is no
 * delay) no new command or batch begins, and every piece already running is waited for, on the
 * shutdown thread, before anything closes: until it ends, or until {@code quarkus.shutdown.timeout}
 * after the stop began. From the moment that wait begins, HTTP requests are refused too
 * ({@code io.payonce.api.StoppedRefusal}): the HTTP listener is still open, but nothing begun then could count on
 * the pool. A piece is one command, one job's run (which stops between its batches, or between the
 * payments the card recovery takes), or one detached write: each is bounded by the processor's
 * timeout and a transaction's bounds, which the shutdown timeout covers. A piece cut off by a kill
 * anyway is the crash payonce already survives: a transaction rolls back, a lease runs out, a message
 * is redelivered.
 *
 * <p>The count is an atomic and the flags are volatile: event-loop threads begin and end pieces and
 * must never wait on a lock the shutdown thread holds.
 */
@ApplicationScoped
public class Draining {

    private static final Logger LOG = Logger.getLogger(Draining.class);
    /** How often the shutdown thread looks at the count while it waits. */
    private static final long POLL_MILLIS = 20;

    private final Duration bound;
    private final AtomicInteger running = new AtomicInteger();
    private volatile long stopBegan;
    private volatile boolean stopping;
    private volatile boolean refusing;

    public Draining(@ConfigProperty(name = "quarkus.shutdown.timeout") Optional<Duration> shutdownTimeout) {
        this.bound = shutdownTimeout.orElse(Duration.ZERO);
    }

    /** True once the instance has begun to stop: a loop of batches ends before its next one. */
    public boolean stopping() {
        return stopping;
    }

    /** True once the shutdown waits for the last pieces: a request begun now could not be finished. */
    public boolean refusing() {
        return refusing;
    }

    /**
     * Runs {@code work} and counts it as running until it ends, or, once the instance is stopping,
     * runs {@code instead} (which must not touch a store).
     */
    public <T> Uni<T> unlessStopping(Supplier<Uni<T>> work, Supplier<Uni<T>> instead) {
        return Uni.createFrom().deferred(() -> begin() ? counted(work) : instead.get());
    }

    /**
     * Runs {@code work}, stopping or not, and counts it as running until it ends: work an admitted
     * request began, which the stop must wait for even when nobody waits for its answer.
     */
    public <T> Uni<T> track(Uni<T> work) {
        return Uni.createFrom().deferred(() -> {
            running.incrementAndGet();
            return counted(() -> work);
        });
    }

    /** Ends the count however {@code work} ends: an item, a failure, a cancellation, or a supplier that throws. */
    private <T> Uni<T> counted(Supplier<Uni<T>> work) {
        return Uni.createFrom().<T>deferred(work::get).onTermination().invoke(running::decrementAndGet);
    }

    /** Counts a piece first and looks at the flag after: the shutdown, which does the reverse, never misses it. */
    private boolean begin() {
        running.incrementAndGet();
        if (stopping) {
            running.decrementAndGet();
            return false;
        }
        return true;
    }

    /** Readiness has just gone DOWN: HTTP is still served, but nothing new of ours starts. */
    void delayBegins(@Observes ShutdownDelayInitiatedEvent event) {
        stop();
    }

    /**
     * HTTP is drained; the database pool, Redis and the broker close once this returns. Observed
     * before any other shutdown observer, so that they close nothing under a running piece.
     */
    void shutdown(@Observes @Priority(Interceptor.Priority.PLATFORM_BEFORE) ShutdownEvent event) {
        refusing = true;
        stop();
        try {
            awaitIdle();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private synchronized void stop() {
        if (!stopping) {
            stopBegan = System.nanoTime();
            stopping = true;
            LOG.infof("Stopping: no new command or batch starts; %d running", running.get());
        }
    }

    private void awaitIdle() throws InterruptedException {
        long deadline = stopBegan + bound.toNanos();
        while (running.get() > 0 && System.nanoTime() < deadline) {
            TimeUnit.MILLISECONDS.sleep(POLL_MILLIS);
        }
        int left = running.get();
        if (left > 0) {
            LOG.warnf("Stopping with %d commands, batches or detached writes still running after %s: they end as a crash would", left, bound);
        }
    }
}
