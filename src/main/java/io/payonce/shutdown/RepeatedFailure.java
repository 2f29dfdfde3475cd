package io.payonce.shutdown;

import org.jboss.logging.Logger;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * The warning of one step of a scheduled job that may fail run after run the same way (a store away
 * for an hour fails a job running every second 3,600 times): warned when it begins or changes, again
 * every {@link #REMINDER} while it lasts, so that an operator an alert sends to the logs finds it
 * among recent lines, and at DEBUG between; the first run whose step goes through again is told at
 * INFO. Runs of one job never overlap (their schedule skips a run while one goes on), so one run at a
 * time calls this.
 */
final class RepeatedFailure {

    static final Duration REMINDER = Duration.ofMinutes(5);

    private final Logger log;
    private final String warning;
    private final String recovered;
    private final Clock clock;
    /** The failure warned last, when it was, and how many runs it has ended since the steps last went through; null while they go through. */
    private volatile String failing;
    private volatile Instant warnedAt;
    private volatile int runs;

    /**
     * @param warning   the warning, before its cause
     * @param recovered the line a step that goes through again writes, a format taking the count of runs that failed
     */
    RepeatedFailure(Logger log, String warning, String recovered, Clock clock) {
        this.log = log;
        this.warning = warning;
        this.recovered = recovered;
        this.clock = clock;
    }

    void failed(Throwable failure) {
        String because = failure.toString();
        Instant now = clock.instant();
        runs++;
        if (!because.equals(failing)) {
            log.warnf("%s: %s", warning, because);
        } else if (!now.isBefore(warnedAt.plus(REMINDER))) {
            log.warnf("%s, %d runs in a row: %s", warning, runs, because);
        } else {
            log.debugf("%s, %d runs in a row: %s", warning, runs, because);
            return;
        }
        failing = because;
        warnedAt = now;
    }

    void wentThrough() {
        if (failing != null) {
            log.infof(recovered, runs);
            failing = null;
            runs = 0;
        }
    }
}
