package io.payonce.events;

import com.rabbitmq.client.GetResponse;
import io.payonce.broker.ConfirmedPublisher;
import io.payonce.broker.RefusingPublisher;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Broker;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Management;
import io.payonce.support.Meters;
import io.payonce.support.Tokens;
import io.quarkus.arc.ClientProxy;
import io.quarkus.test.junit.QuarkusMock;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An event the broker keeps refusing does not hold back the outbox: tried alone, once a relay run, while
 * the events behind it wait unsent, it is parked after payonce.outbox.park-after-refusals refusals (3 in
 * tests) once the broker takes the event behind it, and the rest goes on in commit order; the
 * payonce_outbox_parked gauge counts it, and the statement docs/messaging/events.md gives operators
 * sends it again. The broker's refusal of one message, its closing the channel on it (406), is injected
 * ({@link RefusingPublisher}); a nack, real RabbitMQ's (a queue of the test's own that holds nothing),
 * is no refusal: it parks nothing, the events wait in commit order until the broker takes them.
 */
@QuarkusTest
@ExtendWith(LedgerInvariants.class)
class OutboxParkingTest {

    /** What docs/messaging/events.md gives operators to send a parked event again. */
    static final String SEND_AGAIN = "UPDATE outbox_event SET parked_at = NULL, refusals = 0 WHERE event_id = ? AND parked_at IS NOT NULL";
    private static final Duration WITHIN = Duration.ofSeconds(20);
    /** When to give up on relay runs: a second apart, each bounded by the broker's 2 s. */
    private static final Duration RUNS_WITHIN = Duration.ofSeconds(60);
    private static final int PAYMENTS = 3;
    private static final int PARK_AFTER_REFUSALS = 3;

    private final Database db = Database.forTests();
    private final AtomicBoolean refusing = new AtomicBoolean(true);
    private final AtomicBoolean batchesUnconfirmed = new AtomicBoolean(true);

    @Inject
    ConfirmedPublisher publisher;

    @Inject
    Meters meters;

    @Test
    void anEventTheBrokerKeepsRefusingIsParkedTheEventsBehindItGoOnInOrderAndTheOperatorsStatementSendsItAgain() throws Exception {
        String userId = Tokens.newUserId();
        String mine = "\"userId\":\"" + userId + "\"";
        Predicate<ConfirmedPublisher.Outgoing> ours = message -> new String(message.body(), StandardCharsets.UTF_8).contains(mine);
        // Only this test's events: those earlier tests left unsent ahead of them (written in the last relay run) go to the broker.
        QuarkusMock.installMockForType(new RefusingPublisher(ClientProxy.unwrap(publisher),
                message -> refusing.get() && message.routingKey().equals("deposit.credited") && ours.test(message),
                message -> batchesUnconfirmed.get() && ours.test(message)), ConfirmedPublisher.class);
        try (Broker broker = Broker.connect()) {
            String payments = broker.temporaryQueueOn(Broker.EVENTS, "payment.succeeded");
            // Another user's deposit, written a moment before and still unsent: ahead of this test's events in one batch, as the
            // last events of the test before often are. The relay is held off meanwhile, so that it never sends that one alone.
            Buyer ahead;
            Buyer buyer;
            try (Connection relayHeldOff = uncommittedEventAheadOfAll()) {
                ahead = Buyer.withBalance(1_000);
                buyer = Buyer.named(userId, 10_000);
                for (int i = 0; i < PAYMENTS; i++) {
                    assertEquals(201, Api.pay(buyer.bearer(), buyer.newOrder(1000), Api.newKey()).statusCode());
                }
                assertEquals(1, unsent(ahead, "deposit.credited"), "set-up: the event ahead was unsent when this test's were written behind it");
                relayHeldOff.rollback();
            }
            String deposit = eventIds(buyer, "deposit.credited").get(0);
            List<String> written = eventIds(buyer, "payment.succeeded");

            // Batches go unconfirmed meanwhile: the parking, made before the batch behind it, is kept all the same.
            Await.until(() -> db.count("SELECT COUNT(*) FROM outbox_event WHERE event_id = ? AND parked_at IS NOT NULL", deposit) == 1,
                    WITHIN, "the refused event parked");
            assertEquals(0, unsent(ahead, "deposit.credited"), "the event ahead sent before the refused one was tried alone");
            batchesUnconfirmed.set(false);
            Await.until(() -> unsent(buyer, "payment.succeeded") == 0, WITHIN, "the events behind it sent");
            // Two more relay runs end. Runs never overlap, so the second began after every event was marked sent: an event
            // sent again by either is confirmed, so in the queue, before its run ends.
            double runsBefore = relayRuns();
            Await.until(() -> relayRuns() >= runsBefore + 2, RUNS_WITHIN, "two more relay runs ended");
            List<String> delivered = deliveredOf(broker, payments, buyer);

            assertEquals(written, delivered.stream().distinct().toList(), "each event behind delivered, first in commit order");
            Map<String, Long> times = delivered.stream().collect(Collectors.groupingBy(Function.identity(), Collectors.counting()));
            assertTrue(times.values().stream().allMatch(n -> n <= 2),
                    "sent again at most once after the parking, not every second while the refused one was tried: " + times);
            assertEquals(PARK_AFTER_REFUSALS, db.count("SELECT refusals FROM outbox_event WHERE event_id = ?", deposit));
            assertEquals(RefusingPublisher.TOO_LARGE, db.string("SELECT last_refusal FROM outbox_event WHERE event_id = ?", deposit));
            Await.until(() -> Management.sample(Management.metrics(), "payonce_outbox_parked") >= 1, WITHIN, "the gauge counting it");

            refusing.set(false);
            assertEquals(1, db.update(SEND_AGAIN, deposit));
            Await.until(() -> unsent(buyer, "deposit.credited") == 0, WITHIN, "the parked event sent once an operator sent it again");
            assertEquals(0, db.count("SELECT COUNT(*) FROM outbox_event WHERE parked_at IS NOT NULL AND user_id = ?", buyer.userId()));
        }
    }

    /**
     * A queue whose overflow is reject-publish, full, nacks every event routed to it while the broker
     * takes the others: that is no refusal of the event. Nothing is parked, nothing counted, the events
     * behind wait unsent, and everything goes, in commit order, once the broker takes the event again.
     */
    @Test
    void aNackParksNothingTheEventsWaitInOrderUntilTheBrokerTakesThem() throws Exception {
        try (Broker broker = Broker.connect()) {
            String payments = broker.temporaryQueueOn(Broker.EVENTS, "payment.succeeded");
            String refusing = broker.refusingQueueOn(Broker.EVENTS, "deposit.credited");
            Buyer buyer = Buyer.withBalance(10_000);
            for (int i = 0; i < PAYMENTS; i++) {
                assertEquals(201, Api.pay(buyer.bearer(), buyer.newOrder(1000), Api.newKey()).statusCode());
            }
            String deposit = eventIds(buyer, "deposit.credited").get(0);
            List<String> written = eventIds(buyer, "payment.succeeded");

            // More relay runs fail on the nacked deposit, at the head of the outbox, than the refusals that would park it.
            // Runs never overlap, so all but the first of them began after these events were written.
            double nackedBefore = failedRuns();
            Await.until(() -> failedRuns() >= nackedBefore + PARK_AFTER_REFUSALS + 1, RUNS_WITHIN,
                    "relay runs failing on the nacked event, more than the refusals that park one");
            assertEquals(0, db.count("SELECT COUNT(*) FROM outbox_event WHERE parked_at IS NOT NULL AND user_id = ?", buyer.userId()),
                    "nothing parked on a nack");
            assertEquals(0, db.count("SELECT refusals FROM outbox_event WHERE event_id = ?", deposit), "a nack is no refusal");
            assertEquals(PAYMENTS, unsent(buyer, "payment.succeeded"), "the events behind wait in commit order");

            broker.delete(refusing);
            Await.until(() -> unsent(buyer, "payment.succeeded") + unsent(buyer, "deposit.credited") == 0, WITHIN, "all sent");
            List<String> delivered = new ArrayList<>();
            Await.until(() -> {
                delivered.addAll(deliveredOf(broker, payments, buyer));
                return delivered;
            }, seen -> seen.containsAll(written), WITHIN, "every event behind delivered");
            assertEquals(written, delivered.stream().distinct().toList(), "first deliveries in commit order");
        }
    }

    /**
     * An event of the test's own, inserted and left uncommitted in a session of its own, before any event
     * the test writes: the relay's locking read of the oldest unsent events waits on it, gives up at its
     * lock wait, and sends nothing that run. Rolled back, the events written meanwhile go in the relay's
     * next batch, together.
     */
    private Connection uncommittedEventAheadOfAll() throws SQLException {
        Connection session = db.connect();
        try {
            session.setAutoCommit(false);
            try (PreparedStatement event = session.prepareStatement("""
                    INSERT INTO outbox_event (event_id, event_type, user_id, ref_id, idem_key, payload)
                    VALUES (?, 'test.holds.the.relay', ?, 'none', 'none', '{}')""")) {
                event.setString(1, UUID.randomUUID().toString());
                event.setString(2, Tokens.newUserId());
                event.executeUpdate();
            }
            return session;
        } catch (SQLException e) {
            session.close();
            throw e;
        }
    }

    /** The relay's scheduled runs ended so far, whatever their outcome. */
    private double relayRuns() {
        return meters.count(OutboxRelay.RUNS);
    }

    private double failedRuns() {
        return meters.count(OutboxRelay.RUNS, "outcome", "failed");
    }

    private List<String> eventIds(Buyer buyer, String type) {
        return db.strings("SELECT event_id FROM outbox_event WHERE user_id = ? AND event_type = ? ORDER BY id", buyer.userId(), type);
    }

    private long unsent(Buyer buyer, String type) {
        return db.count("SELECT COUNT(*) FROM outbox_event WHERE user_id = ? AND event_type = ? AND sent_at IS NULL", buyer.userId(), type);
    }

    /** The ids of this buyer's events on {@code queue}, in the order they arrived, every copy; the queue is emptied. */
    private static List<String> deliveredOf(Broker broker, String queue, Buyer buyer) throws IOException {
        String mine = "\"userId\":\"" + buyer.userId() + "\"";
        List<String> delivered = new ArrayList<>();
        for (GetResponse message = broker.poll(queue); message != null; message = broker.poll(queue)) {
            if (Broker.text(message).contains(mine)) {
                delivered.add(message.getProps().getMessageId());
            }
        }
        return delivered;
    }
}
