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
import java.util.function.Supplier;

/**
 * The work an instance does on its own (commands from the queue, the outbox relay, the card
 * recovery job) and the instance's stop. Quarkus drains HTTP by itself: on SIGTERM readiness goes
 * DOWN for {@code quarkus.shutdown.delay} while requests are still served, then in-flight requests
 * get up to {@code quarkus.shutdown.timeout} to answer. It knows nothing of the rest, and would close
 * the database pool and the broker channel under a command or a batch half done.
 *
 * <p>So from the first moment of the stop (the delay's start, or the shutdown itself when there is no
 * delay) no new piece of such work begins, and a piece already running is waited for, on the
 * shutdown thread, before anything closes: until it ends, or until {@code quarkus.shutdown.timeout}
 * after the stop began. A piece is one command, one relay run (which stops between its batches) or
 * one recovery run (which stops between its payments): each is bounded by the processor's timeout
 * and a transaction's bounds, which the shutdown timeout covers. A piece cut off by a kill anyway is
 * the crash payonce already survives: a transaction rolls back, a lease runs out, a message is
 * redelivered.
 */
@ApplicationScoped
public class Draining {

    private static final Logger LOG = Logger.getLogger(Draining.class);

    private final Duration bound;
    private boolean stopping;
    private long stopBegan;
    private int running;

    Draining(@ConfigProperty(name = "quarkus.shutdown.timeout") Optional<Duration> shutdownTimeout) {
        this.bound = shutdownTimeout.orElse(Duration.ZERO);
    }

    /** True once the instance has begun to stop: a loop of batches ends before its next one. */
    public synchronized boolean stopping() {
        return stopping;
    }

    /**
     * Runs {@code work} and counts it as running until it ends, or, once the instance is stopping,
     * runs {@code instead} (which must not touch a store).
     */
    public <T> Uni<T> unlessStopping(Supplier<Uni<T>> work, Supplier<Uni<T>> instead) {
        return Uni.createFrom().deferred(() -> begin() ? work.get().onTermination().invoke(this::end) : instead.get());
    }

    private synchronized boolean begin() {
        if (stopping) {
            return false;
        }
        running++;
        return true;
    }

    private synchronized void end() {
        running--;
        notifyAll();
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
        stop();
        try {
            awaitIdle();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private synchronized void stop() {
        if (!stopping) {
            stopping = true;
            stopBegan = System.nanoTime();
            LOG.infof("Stopping: no new command or batch starts; %d running", running);
        }
    }

    private synchronized void awaitIdle() throws InterruptedException {
        long deadline = stopBegan + bound.toNanos();
        for (long left = deadline - System.nanoTime(); running > 0 && left > 0; left = deadline - System.nanoTime()) {
            Duration wait = Duration.ofNanos(left);
            wait(Math.max(1, wait.toMillis()));
        }
        if (running > 0) {
            LOG.warnf("Stopping with %d commands or batches still running after %s: they end as a crash would", running, bound);
        }
    }
}
