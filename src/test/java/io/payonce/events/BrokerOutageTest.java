package io.payonce.events;

import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Broker;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.GatedStores.Outage;
import io.payonce.support.GatedStores.Store;
import io.payonce.support.GatedStores;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Payments made while the broker is away: their events wait in the outbox, unsent, and every one
 * is delivered once the broker is back, each with its one event id however often it was sent. The
 * broker goes away for payonce only: its connections run through a gate the test shuts.
 */
@QuarkusTest
@TestProfile(GatedStores.class)
@ExtendWith(LedgerInvariants.class)
class BrokerOutageTest {

    private static final int PAYMENTS = 3;
    /** When to give up on relay runs: they come a second apart, and one that finds no broker fails within 2 s. */
    private static final Duration RUNS_WITHIN = Duration.ofSeconds(60);

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    @Test
    void eventsWaitForTheBrokerAndAreAllDeliveredWhenItReturns() throws Exception {
        Buyer buyer = Buyer.withBalance(10_000);
        try (Broker broker = Broker.connect()) {
            String queue = broker.temporaryQueueOn(Broker.EVENTS, "payment.succeeded");

            long unsentWhileAway;
            try (Outage brokerAway = GatedStores.away(Store.RABBITMQ)) {
                for (int i = 0; i < PAYMENTS; i++) {
                    assertEquals(201, Api.pay(buyer.bearer(), buyer.newOrder(1000), Api.newKey()).statusCode(), "paying needs no broker");
                }
                // Three relay runs fail after the payments were written, each finding no broker. Runs never overlap, so all
                // but the first of them began after the last payment, with its event there to send.
                double failedBefore = failedRuns();
                Await.until(() -> failedRuns() >= failedBefore + 3, RUNS_WITHIN, "three relay runs failing without the broker");
                unsentWhileAway = db.count("SELECT COUNT(*) FROM outbox_event WHERE user_id = ? AND event_type = 'payment.succeeded' "
                        + "AND sent_at IS NULL", buyer.userId());
            }
            Set<String> written = new HashSet<>(db.strings(
                    "SELECT event_id FROM outbox_event WHERE user_id = ? AND event_type = 'payment.succeeded'", buyer.userId()));
            Set<String> delivered = new HashSet<>();
            long deadline = System.nanoTime() + Duration.ofSeconds(40).toNanos();
            // Other tests' payments publish on this exchange too: this user's events only.
            String mine = "\"userId\":\"" + buyer.userId() + "\"";
            while (!delivered.containsAll(written) && System.nanoTime() < deadline) {
                delivered.add(broker.await(queue, m -> Broker.text(m).contains(mine), Duration.ofSeconds(40)).getProps().getMessageId());
            }

            assertEquals(PAYMENTS, unsentWhileAway, "the events wait in the outbox while the broker is away");
            assertEquals(PAYMENTS, written.size());
            assertTrue(delivered.containsAll(written), "every event delivered: " + written + " vs " + delivered);
            assertTrue(written.containsAll(delivered), "no event of this user's but the written ones: " + delivered);
        }
    }

    private double failedRuns() {
        return meters.count(OutboxRelay.RUNS, "outcome", "failed");
    }
}
