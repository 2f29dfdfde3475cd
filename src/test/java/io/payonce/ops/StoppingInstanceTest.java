package io.payonce.ops;

import io.payonce.events.OutboxRelay;
import io.payonce.support.Await;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.quarkus.runtime.ShutdownDelayInitiatedEvent;
import io.quarkus.scheduler.Scheduler;
import io.quarkus.scheduler.Trigger;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.enterprise.event.Event;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * An instance that has begun to stop (the shutdown delay's event, fired here as Quarkus fires it on
 * SIGTERM) still serves HTTP, but its outbox relay publishes nothing: neither on its one-second
 * schedule nor when run, so that the next batch waits for an instance that stays. A profile of its
 * own, since a stop cannot be undone.
 */
@QuarkusTest
@TestProfile(StoppingInstanceTest.OwnInstance.class)
class StoppingInstanceTest {

    /** The relay's scheduled method, as the scheduler describes its trigger. */
    private static final String SCHEDULED_RELAY = OutboxRelay.class.getName() + "#scheduled";
    private static final Duration WITHIN = Duration.ofSeconds(30);

    @Inject
    Event<ShutdownDelayInitiatedEvent> shutdownDelay;

    @Inject
    OutboxRelay relay;

    @Inject
    Scheduler scheduler;

    private final Database db = Database.forTests();

    @Test
    void onceStoppingTheRelayStartsNoBatch() {
        shutdownDelay.fire(new ShutdownDelayInitiatedEvent());
        Checkout payer = Buyer.withBalance(5000).checkout(1200);
        Instant written = Instant.now();

        // The scheduler fires the relay three times after the event was written, however slow the machine: a
        // stopping instance must start a batch on none. It records a fire at the whole second before it, so a fire
        // time after the write is a fire after it; and it records a fire as it dispatches the run, so the third
        // seen means the first two runs have been dispatched.
        Set<Instant> firedSince = new TreeSet<>();
        Await.until(() -> {
            Instant fired = lastRelayFire();
            if (fired != null && fired.isAfter(written)) {
                firedSince.add(fired);
            }
            return firedSince;
        }, seen -> seen.size() >= 3, WITHIN, "the scheduler firing the relay three times after the event was written");
        assertEquals(1, unsentEvents(payer.userId()), "the deposit's event, left by the scheduled runs");
        assertEquals(0, relay.relay().await().atMost(Duration.ofSeconds(10)), "a run publishes no batch");
        assertEquals(1, unsentEvents(payer.userId()));
    }

    /** When the scheduler last fired the relay's trigger; null before its first fire. */
    private Instant lastRelayFire() {
        Trigger trigger = scheduler.getScheduledJobs().stream()
                .filter(job -> SCHEDULED_RELAY.equals(job.getMethodDescription()))
                .findFirst()
                .orElseThrow(() -> new AssertionError("set-up: the relay is scheduled on this instance"));
        return trigger.getPreviousFireTime();
    }

    private long unsentEvents(String userId) {
        return db.count("SELECT COUNT(*) FROM outbox_event WHERE user_id = ? AND sent_at IS NULL", userId);
    }

    public static final class OwnInstance implements QuarkusTestProfile {
    }
}
