package io.payonce.support;

import java.time.Duration;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * The one way a test waits for something to happen: it looks, and looks again after a pause that
 * grows from 5 to 100 ms, until the thing holds or the timeout passes, and then fails naming what it
 * awaited. A test so waits as long as payonce takes and no longer, never a fixed guess at it.
 */
public final class Await {

    private static final long FIRST_PAUSE_MILLIS = 5;
    private static final long LONGEST_PAUSE_MILLIS = 100;

    private Await() {
    }

    /** A look at something a test waits for; it may throw, and a throw ends the wait. */
    @FunctionalInterface
    public interface Look<T> {
        T take() throws Exception;
    }

    /** Returns once {@code condition} holds; fails after {@code timeout}, naming what was {@code awaited}. */
    public static void until(Look<Boolean> condition, Duration timeout, String awaited) {
        until(condition, Boolean.TRUE::equals, timeout, awaited);
    }

    /** Looks until what it sees satisfies {@code done}, and returns that; fails after {@code timeout}, naming the last look. */
    public static <T> T until(Look<T> look, Predicate<? super T> done, Duration timeout, String awaited) {
        long deadline = System.nanoTime() + timeout.toNanos();
        long pause = FIRST_PAUSE_MILLIS;
        while (true) {
            T seen = take(look);
            if (done.test(seen)) {
                return seen;
            }
            if (System.nanoTime() > deadline) {
                return fail("not within " + timeout.toMillis() + " ms: " + awaited + "; last seen: " + seen);
            }
            sleep(pause);
            pause = Math.min(2 * pause, LONGEST_PAUSE_MILLIS);
        }
    }

    private static <T> T take(Look<T> look) {
        try {
            return look.take();
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting", e);
        }
    }
}
