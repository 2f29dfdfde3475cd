package io.payonce.commands;

import com.rabbitmq.client.GetResponse;
import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Await;
import io.payonce.support.Broker;
import io.payonce.support.Database;
import io.payonce.support.Meters;
import io.restassured.response.Response;

import java.time.Duration;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What the card pay command tests share: sending a command and awaiting its reply, the processor
 * simulator's ledger, and the consumer's count of what became of each delivery ({@code payonce.messages},
 * added to as it acks, requeues or dead-letters it). Tests run one at a time and each settles its
 * commands before it ends, so a count that moves while a test's command is the only one in hand is
 * that command's.
 */
final class CardCommands {

    static final Duration WITHIN = Duration.ofSeconds(15);
    static final Duration RECOVERY_BOUND = Duration.ofSeconds(20);
    static final String NO_REPLY_TO = null;

    private CardCommands() {
    }

    /** The test classes whose application has made its first processor call; each profile starts an application of its own. */
    private static final Set<Class<?>> WARMED = ConcurrentHashMap.newKeySet();

    /**
     * A card pay first, once per test class: the processor client's first call loads and connects it,
     * which no test's timing or hold should include.
     */
    static void warmTheProcessorClientOf(Class<?> testClass) {
        if (WARMED.add(testClass)) {
            warmTheProcessorClient();
        }
    }

    private static void warmTheProcessorClient() {
        CardBuyer buyer = CardBuyer.withOrder(100);
        Response answer = Await.until(() -> buyer.payOverHttp(buyer.key(), "tok_visa"), paid -> paid.statusCode() != 202, RECOVERY_BOUND,
                "a definite answer to the warm-up card pay");
        assertEquals(201, answer.statusCode(), answer.asString());
    }

    static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }

    static GetResponse send(Broker broker, String key, String replies, String body) throws Exception {
        String correlation = UUID.randomUUID().toString();
        broker.publish(Broker.COMMANDS, "pay", Broker.commandProperties(key, replies, correlation), body);
        return broker.await(replies, m -> correlation.equals(m.getProps().getCorrelationId()), WITHIN);
    }

    /** As a patient sender: the same command under the same message-id again while the reply is a 202; fails after the recovery bound. */
    static GetResponse sendUntilDefinite(Broker broker, String key, String replies, String body) throws Exception {
        return Await.until(() -> send(broker, key, replies, body), reply -> Replies.status(reply) != 202, RECOVERY_BOUND,
                "a reply other than 202 to the command sent again");
    }

    /** Returns once the order is PAYING: the first pay's transaction committed, its lease held, its charge on its way. */
    static void awaitCharging(Database db, CardBuyer buyer) {
        Await.until(() -> "PAYING".equals(db.orderStatus(buyer.order())), WITHIN, "the first pay's charge to be on its way");
    }

    /**
     * Returns once the first pay's charge is held at the processor ({@link Fault#HELD}): its payment
     * committed as sent, under a lease, and its key's claim open with no answer, until the test lets go.
     */
    static void awaitChargeHeld(CardBuyer buyer) {
        Await.until(() -> processor().heldChargesOf(buyer.order()) == 1, WITHIN, "the charge of order " + buyer.order() + " held at the processor");
    }

    /** How many commands the consumer has settled so far with {@code outcome}: executed, replayed, requeued, dead_lettered... */
    static double settled(Meters meters, String outcome) {
        return meters.count("payonce.messages", "outcome", outcome);
    }

    /** Returns once the consumer has settled a command with {@code outcome} since it counted {@code before}; fails after {@link #WITHIN}. */
    static void awaitSettled(Meters meters, String outcome, double before, String awaited) {
        Await.until(() -> settled(meters, outcome) > before, WITHIN, awaited);
    }

    static long chargesOf(CardBuyer buyer) {
        return processor().charges().stream().filter(c -> c.reference().equals("order-" + buyer.order())).count();
    }

    /** One payment of the order, one charge at the processor, made by one request under the payment's key. */
    static void assertChargedOnce(Database db, CardBuyer buyer, long payment) {
        assertEquals(1, db.count("SELECT COUNT(*) FROM pay_record WHERE order_id = ?", buyer.order()));
        assertEquals(1, chargesOf(buyer));
        assertEquals(1, processor().chargeRequestsUnder(buyer.processorKey(payment)));
        assertEquals("PAID", db.orderStatus(buyer.order()));
    }
}
