package io.payonce.shutdown;

import io.payonce.support.Await;
import io.quarkus.runtime.ShutdownDelayInitiatedEvent;
import io.quarkus.runtime.ShutdownEvent;
import io.smallrye.mutiny.Uni;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Arrays;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the stop waits for, and that the count it waits on always comes back to zero. */
class DrainingTest {

    /** Long enough that a test which returns sooner shows the stop did not wait for the bound. */
    private static final Duration BOUND = Duration.ofSeconds(20);
    /** When to give up on the stop reaching its wait, or ending once the work has: well short of {@link #BOUND}. */
    static final Duration STOP_WITHIN = Duration.ofSeconds(10);

    private final Draining draining = new Draining(Optional.of(BOUND));

    @Test
    void workThatThrowsBeforeItIsAUniIsNotCountedForEver() throws Exception {
        Uni<String> broken = draining.unlessStopping(() -> {
            throw new IllegalStateException("no Uni at all");
        }, () -> Uni.createFrom().item("instead"));
        assertThrows(IllegalStateException.class, () -> broken.await().atMost(Duration.ofSeconds(5)));

        // A piece counted for ever would hold the stop for the whole bound: any shorter stop found the count at zero.
        assertTrue(shutdownTakes() < BOUND.toMillis(), "the stop waited for a piece that never ran");
    }

    @Test
    void theStopWaitsForTrackedWorkUntilItEnds() throws Exception {
        CompletableFuture<String> commit = new CompletableFuture<>();
        draining.track(Uni.createFrom().completionStage(commit)).subscribe().with(ignored -> { }, ignored -> { });

        CompletableFuture<Void> stopped = shutdownWaitingForWork(draining);
        assertFalse(stopped.isDone(), "the stop returned with tracked work still running");
        commit.complete("committed");
        stopped.get(STOP_WITHIN.toSeconds(), TimeUnit.SECONDS);
    }

    @Test
    void trackedWorkRunsEvenOnceStopping() {
        draining.delayBegins(new ShutdownDelayInitiatedEvent());
        assertEquals("ran", draining.track(Uni.createFrom().item("ran")).await().atMost(Duration.ofSeconds(5)));
        assertEquals("instead", draining.unlessStopping(() -> Uni.createFrom().item("ran"), () -> Uni.createFrom().item("instead"))
                .await().atMost(Duration.ofSeconds(5)));
    }

    @Test
    void requestsAreRefusedOnlyOnceTheShutdownWaits() throws Exception {
        draining.delayBegins(new ShutdownDelayInitiatedEvent());
        assertTrue(draining.stopping());
        assertFalse(draining.refusing(), "during the delay the instance still serves");
        shutdownTakes();
        assertTrue(draining.refusing());
    }

    /**
     * Begins the shutdown on a thread of its own and returns once that thread is seen pausing in the
     * stop's wait (Draining.awaitIdle) between two looks at the count: it found work running and waits
     * for it. Only then does a stop not yet returned prove anything; one that did not wait has returned
     * by then, and the caller's check of it fails.
     */
    static CompletableFuture<Void> shutdownWaitingForWork(Draining draining) {
        CompletableFuture<Void> stopped = new CompletableFuture<>();
        Thread shutdown = new Thread(() -> {
            try {
                draining.shutdown(new ShutdownEvent());
                stopped.complete(null);
            } catch (RuntimeException | Error e) {
                stopped.completeExceptionally(e);
            }
        }, "test-shutdown");
        shutdown.setDaemon(true);
        shutdown.start();
        Await.until(() -> stopped.isDone() || pausedInTheStopsWait(shutdown), STOP_WITHIN, "the stop waiting for the running work");
        return stopped;
    }

    private static boolean pausedInTheStopsWait(Thread shutdown) {
        return shutdown.getState() == Thread.State.TIMED_WAITING && Arrays.stream(shutdown.getStackTrace())
                .anyMatch(frame -> frame.getClassName().equals(Draining.class.getName()) && frame.getMethodName().equals("awaitIdle"));
    }

    private long shutdownTakes() throws Exception {
        long began = System.nanoTime();
        CompletableFuture.runAsync(() -> draining.shutdown(new ShutdownEvent())).get(BOUND.toSeconds() + 5, TimeUnit.SECONDS);
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
    }
}
