package io.payonce.ops;

import io.payonce.events.OutboxRelay;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.quarkus.runtime.ShutdownDelayInitiatedEvent;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import jakarta.enterprise.event.Event;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;

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

    @Inject
    Event<ShutdownDelayInitiatedEvent> shutdownDelay;

    @Inject
    OutboxRelay relay;

    private final Database db = Database.forTests();

    @Test
    void onceStoppingTheRelayStartsNoBatch() throws InterruptedException {
        shutdownDelay.fire(new ShutdownDelayInitiatedEvent());
        Checkout payer = Buyer.withBalance(5000).checkout(1200);

        // Two of the relay's one-second runs pass on purpose: a stopping instance must start neither.
        Thread.sleep(2500);
        assertEquals(1, unsentEvents(payer.userId()), "the deposit's event, left by two scheduled runs");
        assertEquals(0, relay.relay().await().atMost(Duration.ofSeconds(10)), "a run publishes no batch");
        assertEquals(1, unsentEvents(payer.userId()));
    }

    private long unsentEvents(String userId) {
        return db.count("SELECT COUNT(*) FROM outbox_event WHERE user_id = ? AND sent_at IS NULL", userId);
    }

    public static final class OwnInstance implements QuarkusTestProfile {
    }
}
