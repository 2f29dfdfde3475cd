package io.payonce.idempotency;

import io.smallrye.mutiny.Uni;

/**
 * Runs a keyed write to its end even when its caller stops listening. A client that disconnects
 * cancels its request, but the transaction it started goes on in the database and may still
 * commit; whatever follows it (storing the answer, releasing the pay lock, the log line) must wait
 * for that end, not run at the moment of the disconnect.
 */
public final class Detached {

    private Detached() {
    }

    /** Subscribes to {@code work} once; cancelling the returned Uni leaves that subscription running. */
    public static <T> Uni<T> toTheEnd(Uni<T> work) {
        return Uni.createFrom().emitter(emitter -> work.subscribe().with(emitter::complete, emitter::fail));
    }
}
