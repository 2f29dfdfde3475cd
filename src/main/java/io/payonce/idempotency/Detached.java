package io.payonce.idempotency;

import io.payonce.shutdown.Draining;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Runs a keyed write to its end even when its caller stops listening. A client that disconnects
 * cancels its request, but the transaction it started goes on in the database and may still
 * commit; whatever follows it (storing the answer, releasing the pay lock, the log line) must wait
 * for that end, not run at the moment of the disconnect. Quarkus counts such a request as done when
 * its client goes, so the write is counted by {@link Draining} instead: a stop waits for it before
 * the pool closes.
 */
@ApplicationScoped
public class Detached {

    private final Draining draining;

    public Detached(Draining draining) {
        this.draining = draining;
    }

    /** Subscribes to {@code work} once; cancelling the returned Uni leaves that subscription running. */
    public <T> Uni<T> toTheEnd(Uni<T> work) {
        return Uni.createFrom().emitter(emitter -> draining.track(work).subscribe().with(emitter::complete, emitter::fail));
    }
}
