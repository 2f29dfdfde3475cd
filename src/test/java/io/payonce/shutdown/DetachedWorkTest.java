package io.payonce.shutdown;

import io.payonce.idempotency.Detached;
import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.subscription.Cancellable;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * A write whose client hung up goes on, and the stop waits for it: Quarkus counts its request as
 * done, so only Draining's count keeps the pool open under its commit.
 */
class DetachedWorkTest {

    @Test
    void aWriteWhoseClientHungUpHoldsTheStopUntilItEnds() throws Exception {
        Draining draining = new Draining(Optional.of(Duration.ofSeconds(20)));
        Detached detached = new Detached(draining);
        CompletableFuture<String> commit = new CompletableFuture<>();
        CompletableFuture<String> after = new CompletableFuture<>();

        Cancellable request = detached.toTheEnd(Uni.createFrom().completionStage(commit).invoke(after::complete))
                .subscribe().with(ignored -> { }, ignored -> { });
        request.cancel();

        CompletableFuture<Void> stopped = DrainingTest.shutdownWaitingForWork(draining);
        assertFalse(stopped.isDone(), "the stop returned under a write still committing");
        commit.complete("committed");
        stopped.get(DrainingTest.STOP_WITHIN.toSeconds(), TimeUnit.SECONDS);
        assertEquals("committed", after.get(1, TimeUnit.SECONDS), "the write ran to its end");
    }
}
