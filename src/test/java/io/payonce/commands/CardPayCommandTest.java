package io.payonce.commands;

import com.rabbitmq.client.GetResponse;
import io.payonce.commands.settlement.MessageSettlement;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Broker;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.payonce.support.Tokens;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.payonce.commands.CardCommands.NO_REPLY_TO;
import static io.payonce.commands.CardCommands.RECOVERY_BOUND;
import static io.payonce.commands.CardCommands.WITHIN;
import static io.payonce.commands.CardCommands.assertChargedOnce;
import static io.payonce.commands.CardCommands.awaitCharging;
import static io.payonce.commands.CardCommands.awaitSettled;
import static io.payonce.commands.CardCommands.chargesOf;
import static io.payonce.commands.CardCommands.processor;
import static io.payonce.commands.CardCommands.send;
import static io.payonce.commands.CardCommands.sendUntilDefinite;
import static io.payonce.commands.CardCommands.settled;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Card pays by command, through the one pay door: the same guard, phases and recovery as an HTTP
 * card pay, the reply the HTTP answer's status and body. One key sent by HTTP and by message is one
 * charge, whichever comes first. Real RabbitMQ, real MariaDB, the processor simulator over HTTP. The
 * races with a charge the processor holds are in {@link HeldCardChargeCommandTest}.
 */
@QuarkusTest
@WithTestResource(value = ProcessorSimulatorResource.class, scope = TestResourceScope.GLOBAL)
@ExtendWith(LedgerInvariants.class)
class CardPayCommandTest {

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    @BeforeEach
    void warmTheProcessorClient() {
        CardCommands.warmTheProcessorClientOf(getClass());
    }

    @AfterEach
    void heal() {
        processor().heal();
    }

    @Test
    void aCardPayCommandChargesTheCardOnceAndItsResendGetsTheSameAnswer() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            CardBuyer buyer = CardBuyer.withOrder(1999);

            GetResponse first = send(broker, buyer.key(), replies, buyer.cardCommand("tok_visa"));
            GetResponse again = send(broker, buyer.key(), replies, buyer.cardCommand("tok_visa"));

            assertEquals(201, Replies.status(first), Broker.text(first));
            JsonPath paid = JsonPath.from(Broker.text(first));
            assertEquals("card", paid.getString("method"));
            assertEquals("SUCCEEDED", paid.getString("phase"));
            assertEquals(Broker.text(first), Broker.text(again), "the resend gets the first answer");
            assertEquals(true, Replies.repeat(again));
            String processorKey = buyer.processorKey(paid.getLong("paymentId"));
            assertEquals(1999, processor().chargeUnder(processorKey).amount());
            assertEquals(1, processor().chargeRequestsUnder(processorKey), "one request reached the processor");
            assertEquals(1, chargesOf(buyer));
            assertEquals("PAID", db.orderStatus(buyer.order()));
            assertEquals(0, db.balance(buyer.userId()), "a card pay leaves the balance alone");
        }
    }

    @Test
    void aDeclinedCardIsRepliedWith402AndAcked() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            CardBuyer buyer = CardBuyer.withOrder(500);
            double executed = settled(meters, "executed");
            double requeued = settled(meters, "requeued");

            GetResponse declined = send(broker, buyer.key(), replies, buyer.cardCommand("tok_decline_generic"));
            // The consumer counts the command's outcome as it settles it, after the reply: once counted, it is
            // acked, and no redelivery can follow to try the card again or reply twice.
            awaitSettled(meters, "executed", executed, "the declined command acked after its reply");

            assertEquals(402, Replies.status(declined), Broker.text(declined));
            assertEquals("CARD_DECLINED", JsonPath.from(Broker.text(declined)).getString("code"));
            assertEquals("UNPAID", db.orderStatus(buyer.order()), "the order can be paid again");
            assertEquals(requeued, settled(meters, "requeued"), "acked, not sent back to the queue for a second try");
            assertEquals(0, broker.messageCount(replies), "no second reply");
        }
    }

    /** The processor charged the card and its answer was lost: 202 with the payment's location; the same message-id sent again resumes it. */
    @Test
    void aLostProcessorAnswerIsReplied202WithTheLocationAndAResendResumesTheSamePayment() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            CardBuyer buyer = CardBuyer.withOrder(700);
            processor().failNextChargeOf(buyer.order(), Fault.ERROR_AFTER_CHARGE);

            GetResponse accepted = send(broker, buyer.key(), replies, buyer.cardCommand("tok_visa"));

            assertEquals(202, Replies.status(accepted), Broker.text(accepted));
            long payment = JsonPath.from(Broker.text(accepted)).getLong("paymentId");
            assertEquals("UNKNOWN", JsonPath.from(Broker.text(accepted)).getString("phase"));
            assertEquals("/payments/" + payment, String.valueOf(accepted.getProps().getHeaders().get(MessageSettlement.LOCATION_HEADER)));
            GetResponse resumed = sendUntilDefinite(broker, buyer.key(), replies, buyer.cardCommand("tok_visa"));
            assertEquals(201, Replies.status(resumed), Broker.text(resumed));
            assertEquals(payment, JsonPath.from(Broker.text(resumed)).getLong("paymentId"), "the same payment, resumed");
            assertFalse(resumed.getProps().getHeaders().containsKey(MessageSettlement.LOCATION_HEADER), "only a 202 sends its sender elsewhere");
            String processorKey = buyer.processorKey(payment);
            assertEquals(1, processor().chargeRequestsUnder(processorKey), "the charge was looked up, never sent again");
            assertEquals(1, chargesOf(buyer));
            assertEquals("PAID", db.orderStatus(buyer.order()));
        }
    }

    @Test
    void oneKeyByHttpThenByMessageIsOneCharge() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            CardBuyer buyer = CardBuyer.withOrder(1200);

            Response overHttp = buyer.payOverHttp(buyer.key(), "tok_visa");
            GetResponse byMessage = send(broker, buyer.key(), replies, buyer.cardCommand("tok_visa"));

            assertEquals(201, overHttp.statusCode(), overHttp.asString());
            assertEquals(201, Replies.status(byMessage), Broker.text(byMessage));
            assertEquals(overHttp.asString(), Broker.text(byMessage), "one key, one answer");
            assertEquals(true, Replies.repeat(byMessage));
            assertChargedOnce(db, buyer, overHttp.jsonPath().getLong("paymentId"));
        }
    }

    @Test
    void oneKeyByMessageThenByHttpIsOneCharge() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            CardBuyer buyer = CardBuyer.withOrder(1300);

            GetResponse byMessage = send(broker, buyer.key(), replies, buyer.cardCommand("tok_visa"));
            Response overHttp = buyer.payOverHttp(buyer.key(), "tok_visa");

            assertEquals(201, Replies.status(byMessage), Broker.text(byMessage));
            assertEquals(201, overHttp.statusCode(), overHttp.asString());
            assertEquals(Broker.text(byMessage), overHttp.asString(), "one key, one answer");
            assertEquals("true", overHttp.header("Idempotent-Replayed"));
            assertChargedOnce(db, buyer, overHttp.jsonPath().getLong("paymentId"));
        }
    }

    @Test
    void aMessageIdIsBoundToTheMethodAsAnHttpKeyIs() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            CardBuyer buyer = CardBuyer.withOrder(400);
            Api.deposit(Tokens.ops(), buyer.userId(), Api.newKey(), 1000);

            Response byCard = buyer.payOverHttp(buyer.key(), "tok_visa");
            GetResponse fromTheBalance = send(broker, buyer.key(), replies, Broker.payCommand(buyer.userId(), buyer.order()));
            GetResponse anotherCard = send(broker, buyer.key(), replies, buyer.cardCommand("tok_mastercard"));

            assertEquals(201, byCard.statusCode(), byCard.asString());
            assertEquals(422, Replies.status(fromTheBalance), Broker.text(fromTheBalance));
            assertEquals("IDEMPOTENCY_KEY_REUSED", JsonPath.from(Broker.text(fromTheBalance)).getString("code"));
            assertEquals(422, Replies.status(anotherCard), "the key is bound to the card token too: " + Broker.text(anotherCard));
            assertEquals(1000, db.balance(buyer.userId()), "the balance paid nothing");
        }
    }

    @Test
    void invalidCardFieldsAreDeadLetteredNotPaid() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            CardBuyer buyer = CardBuyer.withOrder(600);
            Map<String, String> commands = Map.of(
                    "no token", buyer.command(",\"method\":\"card\""),
                    "a token on a balance pay", buyer.command(",\"method\":\"balance\",\"cardToken\":\"tok_visa\""),
                    "a token without a method", buyer.command(",\"cardToken\":\"tok_visa\""),
                    "a malformed token", buyer.command(",\"method\":\"card\",\"cardToken\":\"tok visa!\""),
                    "an unknown method", buyer.command(",\"method\":\"cash\""));
            Map<String, String> reasons = deadLetterReasons(broker, replies, commands);

            reasons.forEach((what, reason) -> assertTrue(reason.startsWith("invalid ") || reason.startsWith("the body is not"), what + ": " + reason));
            assertTrue(reasons.get("no token").contains("cardToken"), reasons.get("no token"));
            assertEquals(0, broker.messageCount(replies), "no reply for what was never a pay");
            assertEquals("UNPAID", db.orderStatus(buyer.order()));
            assertEquals(0, chargesOf(buyer), "nothing reached the processor");
        }
    }


    /**
     * A command with no reply-to, under another key, meets the order's card payment waiting for a
     * processor that is down: told 409 CARD_PAYMENT_PENDING, it did nothing, and its sender would never
     * hear so. It goes back to the queue once and, told the same on its redelivery, is dead-lettered
     * with the code as its reason, instead of acked; the payment it met settles once, when the processor returns.
     */
    @Test
    void aCardPayCommandWithoutReplyToThatMeetsAPendingPaymentIsDeadLetteredWithTheReasonNotAcked() throws Exception {
        try (Broker broker = Broker.connect()) {
            CardBuyer buyer = CardBuyer.withOrder(950);
            processor().failNextChargeOf(buyer.order(), Fault.TIMEOUT_AFTER_CHARGE);
            CompletableFuture<Response> first = CompletableFuture.supplyAsync(() -> buyer.payOverHttp(buyer.key(), "tok_visa"));
            awaitCharging(db, buyer);
            processor().down();
            try {
                Response pending = first.get(WITHIN.toSeconds(), TimeUnit.SECONDS);
                assertEquals(202, pending.statusCode(), pending.asString());
                String another = Api.newKey();

                broker.publish(Broker.COMMANDS, "pay", Broker.commandProperties(another, NO_REPLY_TO, another), buyer.cardCommand("tok_visa"));
                GetResponse dead = broker.await(Broker.DEAD_LETTERS, m -> another.equals(m.getProps().getMessageId()), WITHIN);

                String reason = String.valueOf(dead.getProps().getHeaders().get(MessageSettlement.REASON_HEADER));
                assertTrue(reason.startsWith("409 CARD_PAYMENT_PENDING") && reason.contains("no reply-to"), reason);
                assertEquals("PAYING", db.orderStatus(buyer.order()), "still waiting for the processor");
            } finally {
                processor().up();
            }
            Response settled = Await.until(() -> buyer.payOverHttp(buyer.key(), "tok_visa"), paid -> paid.statusCode() != 202, RECOVERY_BOUND,
                    "the first pay settled once the processor is back");
            assertEquals(201, settled.statusCode(), settled.asString());
            assertChargedOnce(db, buyer, settled.jsonPath().getLong("paymentId"));
        }
    }



    /** A number or a boolean where text belongs is never turned into text: {@code "method":1} would have been a card pay. */
    @Test
    void aNumberOrABooleanWhereTextBelongsIsDeadLetteredNotCharged() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            CardBuyer buyer = CardBuyer.withOrder(650);
            Map<String, String> commands = Map.of(
                    "a method by its position", buyer.command(",\"method\":1,\"cardToken\":\"tok_visa\""),
                    "a method by its position in text", buyer.command(",\"method\":\"1\",\"cardToken\":\"tok_visa\""),
                    "a method as a boolean", buyer.command(",\"method\":true,\"cardToken\":\"tok_visa\""),
                    "a card token as a number", buyer.command(",\"method\":\"card\",\"cardToken\":4242"),
                    "a user as a number", "{\"type\":\"pay\",\"userId\":" + System.nanoTime() + ",\"orderId\":" + buyer.order()
                            + ",\"method\":\"card\",\"cardToken\":\"tok_visa\"}");
            Map<String, String> reasons = deadLetterReasons(broker, replies, commands);

            reasons.forEach((what, reason) -> assertTrue(reason.startsWith("the body is not"), what + ": " + reason));
            assertEquals(0, broker.messageCount(replies), "no reply for what was never a pay");
            assertEquals("UNPAID", db.orderStatus(buyer.order()));
            assertEquals(0, chargesOf(buyer), "nothing reached the processor");
        }
    }

    /** Sends each of {@code commands} under a message-id of its own; returns, for each, the reason its dead-letter copy names. */
    private static Map<String, String> deadLetterReasons(Broker broker, String replies, Map<String, String> commands) throws Exception {
        Map<String, String> keys = new HashMap<>();
        for (Map.Entry<String, String> command : commands.entrySet()) {
            String key = "msg-" + UUID.randomUUID();
            keys.put(command.getKey(), key);
            broker.publish(Broker.COMMANDS, "pay", Broker.commandProperties(key, replies, key), command.getValue());
        }
        Map<String, String> reasonById = new HashMap<>();
        for (GetResponse dead : broker.awaitAll(Broker.DEAD_LETTERS, keys.size(), m -> keys.containsValue(m.getProps().getMessageId()), WITHIN)) {
            reasonById.put(dead.getProps().getMessageId(), String.valueOf(dead.getProps().getHeaders().get(MessageSettlement.REASON_HEADER)));
        }
        Map<String, String> reasons = new HashMap<>();
        keys.forEach((what, key) -> reasons.put(what, reasonById.get(key)));
        return reasons;
    }
}
