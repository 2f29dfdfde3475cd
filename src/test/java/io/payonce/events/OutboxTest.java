package io.payonce.events;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.rabbitmq.client.GetResponse;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Broker;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Replays;
import io.payonce.support.Tokens;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The outbox: every movement of money writes one event in its own transaction, a repeat or a
 * refusal writes none, and the relay publishes each event to RabbitMQ with its event id as the
 * message id and marks it sent once the broker confirmed it. Real MariaDB, real RabbitMQ.
 */
@QuarkusTest
@WithTestResource(value = ProcessorSimulatorResource.class, scope = TestResourceScope.GLOBAL)
@ExtendWith(LedgerInvariants.class)
class OutboxTest {

    private static final String EXCHANGE = Broker.EVENTS;

    private final Database db = Database.forTests();
    private final ObjectMapper json = new ObjectMapper();

    @Test
    void aPaymentARefundAndADepositEachWriteOneEventCarryingTheirKey() throws Exception {
        Checkout payer = Buyer.withBalance(5000).checkout(1200);
        String payKey = Api.newKey();
        Response paid = Api.pay(payer.bearer(), payer.order(), payKey);
        Replays.assertReplayOf(paid, Api.pay(payer.bearer(), payer.order(), payKey));
        Replays.assertReplayOf(paid, Api.pay(payer.bearer(), payer.order(), Api.newKey()));
        String refundKey = Api.newKey();
        assertEquals(201, Api.refund(Tokens.ops(), payer.order(), refundKey, "r-1", 200).statusCode());

        Map<String, JsonNode> events = eventsOf(payer.userId());

        assertEquals(3, events.size(), events.toString());
        JsonNode payment = events.get("payment.succeeded");
        assertEquals(payKey, payment.path("idempotencyKey").asText());
        assertEquals(paid.jsonPath().getLong("paymentId"), payment.path("ref").asLong());
        assertEquals(payer.order(), payment.path("orderId").asLong());
        assertEquals(1200, payment.path("amount").asLong());
        assertEquals("EUR", payment.path("currency").asText());
        assertEquals(refundKey, events.get("refund.created").path("idempotencyKey").asText());
        assertEquals(200, events.get("refund.created").path("amount").asLong());
        assertEquals("balance", events.get("refund.created").path("method").asText(), "a refund of a balance payment goes to the balance");
        assertEquals(5000, events.get("deposit.credited").path("amount").asLong());
        assertTrue(events.get("deposit.credited").path("orderId").isMissingNode(), "a deposit belongs to no order");
    }

    /**
     * A consumer that keeps balances from events must tell a card payment, which never touched the
     * balance, from a debit of it: the events of the two differ in their method alone.
     */
    @Test
    void aCardPaymentsEventAndABalancePaymentsEventNameTheirMethod() throws Exception {
        Checkout byBalance = Buyer.withBalance(5000).checkout(1200);
        Checkout byCard = Buyer.withBalance(0).checkout(1200);
        assertEquals(201, byBalance.pay().statusCode());
        Response charged = Await.until(() -> byCard.payByCard("tok_visa"), answer -> answer.statusCode() != 202,
                Duration.ofSeconds(20), "the card pay of order " + byCard.order() + " settled");
        assertEquals(201, charged.statusCode(), charged.asString());

        JsonNode balancePayment = eventsOf(byBalance.userId()).get("payment.succeeded");
        JsonNode cardPayment = eventsOf(byCard.userId()).get("payment.succeeded");

        assertEquals("balance", balancePayment.path("method").asText(), balancePayment.toString());
        assertEquals("card", cardPayment.path("method").asText(), cardPayment.toString());
        assertTrue(eventsOf(byBalance.userId()).get("deposit.credited").path("method").isMissingNode(), "a deposit has no method");
    }

    @Test
    void aRefusedPaymentWritesNoEvent() {
        Checkout payer = Buyer.withBalance(100).checkout(1200);

        Response refused = Api.pay(payer.bearer(), payer.order(), Api.newKey());

        assertEquals(402, refused.statusCode(), refused.asString());
        assertEquals(0, db.count("SELECT COUNT(*) FROM outbox_event WHERE user_id = ? AND event_type = 'payment.succeeded'", payer.userId()));
        assertEquals(1, db.count("SELECT COUNT(*) FROM outbox_event WHERE user_id = ?", payer.userId()), "the deposit's event only");
    }

    @Test
    void theRelayPublishesEachEventUnderItsIdOnceTheBrokerConfirmedIt() throws Exception {
        try (Broker broker = Broker.connect()) {
            String queue = broker.temporaryQueueOn(EXCHANGE, "payment.succeeded");
            Buyer buyer = Buyer.withBalance(5000);
            String key = Api.newKey();
            assertEquals(201, Api.pay(buyer.bearer(), buyer.newOrder(700), key).statusCode());
            String eventId = db.string("SELECT event_id FROM outbox_event WHERE user_id = ? AND event_type = 'payment.succeeded'", buyer.userId());

            GetResponse delivered = broker.await(queue, m -> eventId.equals(m.getProps().getMessageId()), Duration.ofSeconds(10));

            assertEquals("application/json", delivered.getProps().getContentType());
            assertEquals(2, delivered.getProps().getDeliveryMode(), "persistent");
            JsonNode event = json.readTree(Broker.text(delivered));
            assertEquals(eventId, event.path("eventId").asText());
            assertEquals(key, event.path("idempotencyKey").asText());
            assertEquals(700, event.path("amount").asLong());
            assertEquals(1, awaitSent(eventId), "marked sent after the confirm");
        }
    }

    /** This user's events by type, as their payloads. */
    private Map<String, JsonNode> eventsOf(String user) throws Exception {
        Map<String, JsonNode> events = new HashMap<>();
        try (var connection = db.connect();
             var query = connection.prepareStatement("SELECT event_type, payload FROM outbox_event WHERE user_id = ?")) {
            query.setString(1, user);
            try (var rows = query.executeQuery()) {
                while (rows.next()) {
                    events.put(rows.getString(1), json.readTree(rows.getString(2)));
                }
            }
        }
        return events;
    }

    private long awaitSent(String eventId) {
        return Await.until(() -> db.count("SELECT COUNT(*) FROM outbox_event WHERE event_id = ? AND sent_at IS NOT NULL", eventId),
                sent -> sent > 0, Duration.ofSeconds(5), "event " + eventId + " marked sent");
    }
}
