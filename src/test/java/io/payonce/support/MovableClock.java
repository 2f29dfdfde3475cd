package io.payonce.support;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;

/** A clock in UTC that stands still until a test moves it: the time is whatever the test says. */
public final class MovableClock extends Clock {

    /** Whole seconds, as a token's times are. */
    private volatile Instant now = Instant.ofEpochSecond(Instant.now().getEpochSecond());

    public void advance(long seconds) {
        advance(Duration.ofSeconds(seconds));
    }

    public void advance(Duration by) {
        now = now.plus(by);
    }

    @Override
    public Instant instant() {
        return now;
    }

    @Override
    public ZoneId getZone() {
        return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
        return this;
    }
}
