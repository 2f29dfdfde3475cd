package io.payonce.shutdown;

import io.quarkus.runtime.ShutdownDelayInitiatedEvent;
import io.quarkus.runtime.ShutdownEvent;
import io.smallrye.mutiny.Uni;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What the stop waits for, and that the count it waits on always comes back to zero. */
class DrainingTest {

    /** Long enough that a test which returns sooner shows the stop did not wait for the bound. */
    private static final Duration BOUND = Duration.ofSeconds(20);

    private final Draining draining = new Draining(Optional.of(BOUND));

    @Test
    void workThatThrowsBeforeItIsAUniIsNotCountedForEver() throws Exception {
        Uni<String> broken = draining.unlessStopping(() -> {
            throw new IllegalStateException("no Uni at all");
        }, () -> Uni.createFrom().item("instead"));
        assertThrows(IllegalStateException.class, () -> broken.await().atMost(Duration.ofSeconds(5)));

        assertTrue(shutdownTakes() < 2_000, "the stop waited for a piece that never ran");
    }

    @Test
    void theStopWaitsForTrackedWorkUntilItEnds() throws Exception {
        CompletableFuture<String> commit = new CompletableFuture<>();
        draining.track(Uni.createFrom().completionStage(commit)).subscribe().with(ignored -> { }, ignored -> { });

        CompletableFuture<Void> stopped = CompletableFuture.runAsync(() -> draining.shutdown(new ShutdownEvent()));
        assertThrows(TimeoutException.class, () -> stopped.get(500, TimeUnit.MILLISECONDS), "the stop returned with tracked work still running");
        commit.complete("committed");
        stopped.get(2, TimeUnit.SECONDS);
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

    private long shutdownTakes() throws Exception {
        long began = System.nanoTime();
        CompletableFuture.runAsync(() -> draining.shutdown(new ShutdownEvent())).get(BOUND.toSeconds() + 5, TimeUnit.SECONDS);
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - began);
    }
}
