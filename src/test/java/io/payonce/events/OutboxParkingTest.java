package io.payonce.events;

import com.rabbitmq.client.GetResponse;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Broker;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Management;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An event the broker keeps refusing does not hold back the outbox: tried alone, once a relay run,
 * while the events behind it wait unsent, it is parked after payonce.outbox.park-after-refusals
 * refusals (3 in tests) once the broker takes the event behind it, and the rest goes on in commit
 * order; the payonce_outbox_parked gauge counts it, and the statement README gives operators sends
 * it again. A broker that refuses the event behind it too is waited for, nothing parked. Real
 * RabbitMQ: a queue of the test's own that holds nothing makes the broker nack what is routed to it.
 */
@QuarkusTest
@ExtendWith(LedgerInvariants.class)
class OutboxParkingTest {

    /** What README gives operators to send a parked event again. */
    static final String SEND_AGAIN = "UPDATE outbox_event SET parked_at = NULL, refusals = 0 WHERE event_id = ? AND parked_at IS NOT NULL";
    private static final Duration WITHIN = Duration.ofSeconds(20);
    private static final int PAYMENTS = 3;
    private static final int PARK_AFTER_REFUSALS = 3;

    private final Database db = Database.forTests();

    @Test
    void anEventTheBrokerKeepsRefusingIsParkedTheEventsBehindItGoOnInOrderAndTheOperatorsStatementSendsItAgain() throws Exception {
        try (Broker broker = Broker.connect()) {
            String payments = broker.temporaryQueueOn(Broker.EVENTS, "payment.succeeded");
            String refusing = broker.refusingQueueOn(Broker.EVENTS, "deposit.credited");
            Buyer buyer = Buyer.withBalance(10_000);
            for (int i = 0; i < PAYMENTS; i++) {
                assertEquals(201, Api.pay(buyer.bearer(), buyer.newOrder(1000), Api.newKey()).statusCode());
            }
            String deposit = eventIds(buyer, "deposit.credited").get(0);
            List<String> written = eventIds(buyer, "payment.succeeded");

            Await.until(() -> db.count("SELECT COUNT(*) FROM outbox_event WHERE event_id = ? AND parked_at IS NOT NULL", deposit) == 1,
                    WITHIN, "the refused event parked");
            Await.until(() -> unsent(buyer, "payment.succeeded") == 0, WITHIN, "the events behind it sent");
            Thread.sleep(2000); // two more relay runs: time for any event sent again to arrive
            List<String> delivered = deliveredOf(broker, payments, buyer);

            assertEquals(written, delivered.stream().distinct().toList(), "each event behind delivered, first in commit order");
            Map<String, Long> times = delivered.stream().collect(Collectors.groupingBy(Function.identity(), Collectors.counting()));
            assertTrue(times.values().stream().allMatch(n -> n <= 2),
                    "sent again at most once after the parking, not every second while the refused one was tried: " + times);
            assertEquals(PARK_AFTER_REFUSALS, db.count("SELECT refusals FROM outbox_event WHERE event_id = ?", deposit));
            assertEquals("nacked by the broker", db.string("SELECT last_refusal FROM outbox_event WHERE event_id = ?", deposit));
            Await.until(() -> Management.sample(Management.metrics(), "payonce_outbox_parked") >= 1, WITHIN, "the gauge counting it");

            broker.delete(refusing);
            assertEquals(1, db.update(SEND_AGAIN, deposit));
            Await.until(() -> unsent(buyer, "deposit.credited") == 0, WITHIN, "the parked event sent once an operator sent it again");
            assertEquals(0, db.count("SELECT COUNT(*) FROM outbox_event WHERE parked_at IS NOT NULL AND user_id = ?", buyer.userId()));
        }
    }

    /**
     * The broker refuses the event behind the refused one too: it may be refusing every event (a full
     * queue whose overflow is reject-publish), so nothing is parked event by event, and everything goes,
     * in commit order, once the broker takes events again.
     */
    @Test
    void aBrokerThatRefusesTheEventBehindTooParksNothingAndAllGoInOrderOnceItTakesThem() throws Exception {
        try (Broker broker = Broker.connect()) {
            String events = broker.temporaryQueueOn(Broker.EVENTS, "#");
            String refusing = broker.refusingQueueOn(Broker.EVENTS, "#");
            Buyer buyer = Buyer.withBalance(10_000);
            assertEquals(201, Api.pay(buyer.bearer(), buyer.newOrder(1000), Api.newKey()).statusCode());
            String deposit = eventIds(buyer, "deposit.credited").get(0);
            String payment = eventIds(buyer, "payment.succeeded").get(0);

            Await.until(() -> db.count("SELECT refusals FROM outbox_event WHERE event_id = ?", payment) > 0, WITHIN,
                    "the event behind tried alone");
            assertTrue(db.count("SELECT refusals FROM outbox_event WHERE event_id = ?", deposit) >= PARK_AFTER_REFUSALS,
                    "the first one tried up to the bound first");
            assertEquals(0, db.count("SELECT COUNT(*) FROM outbox_event WHERE parked_at IS NOT NULL AND user_id = ?", buyer.userId()),
                    "nothing parked while the broker refuses the event behind too");

            broker.delete(refusing);
            Await.until(() -> unsent(buyer, "payment.succeeded") + unsent(buyer, "deposit.credited") == 0, WITHIN, "all sent");
            Thread.sleep(1000); // a relay run: time for the last confirmed event to arrive
            List<String> delivered = deliveredOf(broker, events, buyer);
            assertEquals(List.of(deposit, payment), delivered.stream().distinct().toList(), "first deliveries in commit order");
        }
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
