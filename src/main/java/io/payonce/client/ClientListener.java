package io.payonce.client;

import java.net.URI;
import java.time.Instant;

/**
 * Told of every request a client sends and of every operation's end, on the caller's thread: to count
 * retries and outcomes (a team that cannot see its retries cannot see an outage), to log, to trace.
 * Both methods do nothing unless overridden; neither may throw.
 */
public interface ClientListener {

    ClientListener NONE = new ClientListener() {
    };

    /** One request and its answer, or the lack of one; {@code attempt.number()} 1 is the first, more is a retry. */
    default void attempted(Attempt attempt) {
    }

    /** The operation {@code operation} (pay, card-pay, refund, create-order, deposit, read-payment, read-refund) ended so. */
    default void ended(String operation, Outcome<?> outcome) {
    }

    /**
     * One request: the {@code number}-th of {@code operation} under {@code key}, a {@code method} to
     * {@code uri} (a GET of the {@code Location} a 202 named, a read of the operation's state, carries
     * the number of the request that was answered so), its {@code status} (0 when no answer came: {@code failure} says why), its body, and
     * whether it was marked {@code Idempotent-Replayed}.
     */
    record Attempt(String operation, String key, int number, String method, URI uri, Instant start, Instant end,
                   int status, String body, boolean replayed, Exception failure) {

        /** Whether an answer came. */
        public boolean answered() {
            return status != 0;
        }
    }
}
