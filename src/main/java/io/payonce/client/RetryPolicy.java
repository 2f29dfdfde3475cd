package io.payonce.client;

import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;

/**
 * How long and how often an operation is tried, always under its one key.
 *
 * @param maxAttempts    the most requests an operation sends (reads of a 202's {@code Location} aside)
 * @param deadline       how long the caller waits for a definite answer before it is told {@link Outcome.Pending}
 * @param attemptTimeout how long the first request waits for its answer; each retry waits twice as long
 *                       as the one before (a server slow once is given longer), never past the deadline
 * @param firstBackoff   the pause before the first retry where payonce names none ({@code Retry-After});
 *                       it doubles with each retry, up to {@code maxBackoff}, each pause half of it at random
 * @param maxBackoff     the longest pause between two requests
 */
public record RetryPolicy(int maxAttempts, Duration deadline, Duration attemptTimeout, Duration firstBackoff, Duration maxBackoff) {

    /** Ten requests within 30 s, the first given 5 s, pauses from 100 ms growing to 2 s. */
    private static final Duration LONGEST = Duration.ofDays(1);
    /** The most requests a policy may allow an operation. */
    public static final int MOST_ATTEMPTS = 10_000;

    public static final RetryPolicy DEFAULT = new RetryPolicy(10, Duration.ofSeconds(30), Duration.ofSeconds(5),
            Duration.ofMillis(100), Duration.ofSeconds(2));

    public RetryPolicy {
        if (maxAttempts < 1 || maxAttempts > MOST_ATTEMPTS) {
            throw new IllegalArgumentException("maxAttempts must be 1 to " + MOST_ATTEMPTS + ", not " + maxAttempts);
        }
        for (Duration each : new Duration[] {deadline, attemptTimeout, firstBackoff, maxBackoff}) {
            if (each == null || each.isNegative() || each.isZero() || each.compareTo(LONGEST) > 0) {
                throw new IllegalArgumentException("every duration of a retry policy must be positive, and a day at most");
            }
        }
    }

    public RetryPolicy withDeadline(Duration deadline) {
        return new RetryPolicy(maxAttempts, deadline, attemptTimeout, firstBackoff, maxBackoff);
    }

    public RetryPolicy withMaxAttempts(int maxAttempts) {
        return new RetryPolicy(maxAttempts, deadline, attemptTimeout, firstBackoff, maxBackoff);
    }

    public RetryPolicy withAttemptTimeout(Duration attemptTimeout) {
        return new RetryPolicy(maxAttempts, deadline, attemptTimeout, firstBackoff, maxBackoff);
    }

    /** The timeout of request {@code number} (1 for the first). */
    Duration timeoutOf(int number) {
        return grown(attemptTimeout, number, deadline);
    }

    /** The pause after request {@code number} where the answer named none: half of the grown pause, plus up to as much at random. */
    Duration backoffAfter(int number) {
        long grown = grown(firstBackoff, number, maxBackoff).toNanos();
        return Duration.ofNanos(grown / 2 + ThreadLocalRandom.current().nextLong(grown / 2 + 1));
    }

    private static Duration grown(Duration first, int number, Duration cap) {
        int doublings = Math.min(number - 1, 30);
        long nanos = first.toNanos() > cap.toNanos() >> doublings ? cap.toNanos() : first.toNanos() << doublings;
        return Duration.ofNanos(Math.min(nanos, cap.toNanos()));
    }
}
