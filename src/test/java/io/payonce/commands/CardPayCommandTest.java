package io.payonce.commands;

import com.rabbitmq.client.GetResponse;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Broker;
import io.payonce.support.Buyer;
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

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Card pays by command, through the one pay door: the same guard, phases and recovery as an HTTP
 * card pay, the reply the HTTP answer's status and body. One key sent by HTTP and by message is one
 * charge, whichever comes first. Real RabbitMQ, real MariaDB, the processor simulator over HTTP.
 */
@QuarkusTest
@WithTestResource(value = ProcessorSimulatorResource.class, scope = TestResourceScope.GLOBAL)
@ExtendWith(LedgerInvariants.class)
class CardPayCommandTest {

    private static final Duration WITHIN = Duration.ofSeconds(15);
    private static final Duration RECOVERY_BOUND = Duration.ofSeconds(20);
    private static final String NO_REPLY_TO = null;

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    /** Whether this application's processor client has made its first call, which loads and connects it. */
    private static boolean warm;

    /** A card pay first: a cold client's first call can outlast the tests' 1 s processor timeout, and a pay meant to be charged would get a 202. */
    @BeforeEach
    void warmTheProcessorClient() throws InterruptedException {
        if (!warm) {
            CardBuyer buyer = CardBuyer.withOrder(100);
            Response answer = Await.until(() -> buyer.payOverHttp(buyer.key, "tok_visa"), paid -> paid.statusCode() != 202, RECOVERY_BOUND,
                    "a definite answer to the warm-up card pay");
            assertEquals(201, answer.statusCode(), answer.asString());
            warm = true;
        }
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

            GetResponse first = send(broker, buyer.key, replies, buyer.cardCommand("tok_visa"));
            GetResponse again = send(broker, buyer.key, replies, buyer.cardCommand("tok_visa"));

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
            assertEquals("PAID", db.orderStatus(buyer.order));
            assertEquals(0, db.balance(buyer.userId), "a card pay leaves the balance alone");
        }
    }

    @Test
    void aDeclinedCardIsRepliedWith402AndAcked() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            CardBuyer buyer = CardBuyer.withOrder(500);

            GetResponse declined = send(broker, buyer.key, replies, buyer.cardCommand("tok_decline_generic"));

            assertEquals(402, Replies.status(declined), Broker.text(declined));
            assertEquals("CARD_DECLINED", JsonPath.from(Broker.text(declined)).getString("code"));
            assertEquals("UNPAID", db.orderStatus(buyer.order), "the order can be paid again");
            Thread.sleep(2500); // time for a redelivery, had the command not been acked
            assertEquals(0, broker.messageCount(replies), "acked: no second try, no second reply");
        }
    }

    /** The processor charged the card and its answer was lost: 202 with the payment's location; the same message-id sent again resumes it. */
    @Test
    void aLostProcessorAnswerIsReplied202WithTheLocationAndAResendResumesTheSamePayment() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            CardBuyer buyer = CardBuyer.withOrder(700);
            processor().failNextChargeOf(buyer.order, Fault.ERROR_AFTER_CHARGE);

            GetResponse accepted = send(broker, buyer.key, replies, buyer.cardCommand("tok_visa"));

            assertEquals(202, Replies.status(accepted), Broker.text(accepted));
            long payment = JsonPath.from(Broker.text(accepted)).getLong("paymentId");
            assertEquals("UNKNOWN", JsonPath.from(Broker.text(accepted)).getString("phase"));
            assertEquals("/payments/" + payment, String.valueOf(accepted.getProps().getHeaders().get(CommandConsumer.LOCATION_HEADER)));
            GetResponse resumed = sendUntilDefinite(broker, buyer.key, replies, buyer.cardCommand("tok_visa"));
            assertEquals(201, Replies.status(resumed), Broker.text(resumed));
            assertEquals(payment, JsonPath.from(Broker.text(resumed)).getLong("paymentId"), "the same payment, resumed");
            assertFalse(resumed.getProps().getHeaders().containsKey(CommandConsumer.LOCATION_HEADER), "only a 202 sends its sender elsewhere");
            String processorKey = buyer.processorKey(payment);
            assertEquals(1, processor().chargeRequestsUnder(processorKey), "the charge was looked up, never sent again");
            assertEquals(1, chargesOf(buyer));
            assertEquals("PAID", db.orderStatus(buyer.order));
        }
    }

    @Test
    void oneKeyByHttpThenByMessageIsOneCharge() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            CardBuyer buyer = CardBuyer.withOrder(1200);

            Response overHttp = buyer.payOverHttp(buyer.key, "tok_visa");
            GetResponse byMessage = send(broker, buyer.key, replies, buyer.cardCommand("tok_visa"));

            assertEquals(201, overHttp.statusCode(), overHttp.asString());
            assertEquals(201, Replies.status(byMessage), Broker.text(byMessage));
            assertEquals(overHttp.asString(), Broker.text(byMessage), "one key, one answer");
            assertEquals(true, Replies.repeat(byMessage));
            assertChargedOnce(buyer, overHttp.jsonPath().getLong("paymentId"));
        }
    }

    @Test
    void oneKeyByMessageThenByHttpIsOneCharge() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            CardBuyer buyer = CardBuyer.withOrder(1300);

            GetResponse byMessage = send(broker, buyer.key, replies, buyer.cardCommand("tok_visa"));
            Response overHttp = buyer.payOverHttp(buyer.key, "tok_visa");

            assertEquals(201, Replies.status(byMessage), Broker.text(byMessage));
            assertEquals(201, overHttp.statusCode(), overHttp.asString());
            assertEquals(Broker.text(byMessage), overHttp.asString(), "one key, one answer");
            assertEquals("true", overHttp.header("Idempotent-Replayed"));
            assertChargedOnce(buyer, overHttp.jsonPath().getLong("paymentId"));
        }
    }

    @Test
    void aMessageIdIsBoundToTheMethodAsAnHttpKeyIs() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            CardBuyer buyer = CardBuyer.withOrder(400);
            Api.deposit(Tokens.ops(), buyer.userId, Api.newKey(), 1000);

            Response byCard = buyer.payOverHttp(buyer.key, "tok_visa");
            GetResponse fromTheBalance = send(broker, buyer.key, replies, Broker.payCommand(buyer.userId, buyer.order));
            GetResponse anotherCard = send(broker, buyer.key, replies, buyer.cardCommand("tok_mastercard"));

            assertEquals(201, byCard.statusCode(), byCard.asString());
            assertEquals(422, Replies.status(fromTheBalance), Broker.text(fromTheBalance));
            assertEquals("IDEMPOTENCY_KEY_REUSED", JsonPath.from(Broker.text(fromTheBalance)).getString("code"));
            assertEquals(422, Replies.status(anotherCard), "the key is bound to the card token too: " + Broker.text(anotherCard));
            assertEquals(1000, db.balance(buyer.userId), "the balance paid nothing");
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
            assertEquals("UNPAID", db.orderStatus(buyer.order));
            assertEquals(0, chargesOf(buyer), "nothing reached the processor");
        }
    }

    /**
     * The first pay under the key holds its charge at a processor slow to answer (HTTP here; another
     * instance's consumer alike): the command under the same key is answered 409 at once and acked,
     * not requeued round the consumer until the charge ends; sent again later, it gets the payment.
     */
    @Test
    void aCardPayCommandWhileItsTwinHoldsTheChargeIsReplied409AndAResendLaterGetsThePayment() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            CardBuyer buyer = CardBuyer.withOrder(900);
            processor().failNextChargeOf(buyer.order, Fault.TIMEOUT_AFTER_CHARGE);

            CompletableFuture<Response> first = CompletableFuture.supplyAsync(() -> buyer.payOverHttp(buyer.key, "tok_visa"));
            awaitCharging(buyer);
            String correlation = UUID.randomUUID().toString();
            broker.publish(Broker.COMMANDS, "pay", Broker.commandProperties(buyer.key, replies, correlation), buyer.cardCommand("tok_visa"));
            GetResponse whileCharging = broker.await(replies, m -> correlation.equals(m.getProps().getCorrelationId()), WITHIN);

            assertEquals(409, Replies.status(whileCharging), Broker.text(whileCharging));
            assertEquals("PAYMENT_IN_PROGRESS", JsonPath.from(Broker.text(whileCharging)).getString("code"));
            Response firstAnswer = first.get(WITHIN.toSeconds(), TimeUnit.SECONDS);
            assertEquals(202, firstAnswer.statusCode(), firstAnswer.asString());
            Thread.sleep(1500); // past the requeue pause: time for a second reply, had the command gone back to the queue
            assertEquals(0, broker.messageCount(replies), "acked: not requeued, no second reply");
            GetResponse later = sendUntilDefinite(broker, buyer.key, replies, buyer.cardCommand("tok_visa"));
            assertEquals(201, Replies.status(later), Broker.text(later));
            long payment = firstAnswer.jsonPath().getLong("paymentId");
            assertEquals(payment, JsonPath.from(Broker.text(later)).getLong("paymentId"), "the first pay's payment");
            assertChargedOnce(buyer, payment);
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
            processor().failNextChargeOf(buyer.order, Fault.TIMEOUT_AFTER_CHARGE);
            CompletableFuture<Response> first = CompletableFuture.supplyAsync(() -> buyer.payOverHttp(buyer.key, "tok_visa"));
            awaitCharging(buyer);
            processor().down();
            try {
                Response pending = first.get(WITHIN.toSeconds(), TimeUnit.SECONDS);
                assertEquals(202, pending.statusCode(), pending.asString());
                String another = Api.newKey();

                broker.publish(Broker.COMMANDS, "pay", Broker.commandProperties(another, NO_REPLY_TO, another), buyer.cardCommand("tok_visa"));
                GetResponse dead = broker.await(Broker.DEAD_LETTERS, m -> another.equals(m.getProps().getMessageId()), WITHIN);

                String reason = String.valueOf(dead.getProps().getHeaders().get(CommandConsumer.REASON_HEADER));
                assertTrue(reason.startsWith("409 CARD_PAYMENT_PENDING") && reason.contains("no reply-to"), reason);
                assertEquals("PAYING", db.orderStatus(buyer.order), "still waiting for the processor");
            } finally {
                processor().up();
            }
            Response settled = Await.until(() -> buyer.payOverHttp(buyer.key, "tok_visa"), paid -> paid.statusCode() != 202, RECOVERY_BOUND,
                    "the first pay settled once the processor is back");
            assertEquals(201, settled.statusCode(), settled.asString());
            assertChargedOnce(buyer, settled.jsonPath().getLong("paymentId"));
        }
    }

    /**
     * A command with no reply-to under the key of a pay whose charge is in flight: its first delivery
     * is told 409 PAYMENT_IN_PROGRESS and goes back to the queue rather than being acked; its
     * redelivery either replays the payment or, its twin still charging, is dead-lettered with the
     * reason. Either way the card is charged once, and the command never vanishes unanswered.
     */
    @Test
    void aCardPayCommandWithoutReplyToWhileItsTwinHoldsTheChargeEndsPaidOnceOrDeadLetteredNeverAcked() throws Exception {
        try (Broker broker = Broker.connect()) {
            CardBuyer buyer = CardBuyer.withOrder(910);
            processor().failNextChargeOf(buyer.order, Fault.TIMEOUT_AFTER_CHARGE);
            double requeuedBefore = meters.count("payonce.messages", "outcome", "requeued");

            CompletableFuture<Response> first = CompletableFuture.supplyAsync(() -> buyer.payOverHttp(buyer.key, "tok_visa"));
            awaitCharging(buyer);
            broker.publish(Broker.COMMANDS, "pay", Broker.commandProperties(buyer.key, NO_REPLY_TO, buyer.key), buyer.cardCommand("tok_visa"));

            Await.until(() -> meters.count("payonce.messages", "outcome", "requeued") > requeuedBefore, WITHIN,
                    "the command told to come back, sent back to the queue");
            Response firstAnswer = first.get(WITHIN.toSeconds(), TimeUnit.SECONDS);
            assertEquals(202, firstAnswer.statusCode(), firstAnswer.asString());
            Response settled = Await.until(() -> buyer.payOverHttp(buyer.key, "tok_visa"), paid -> paid.statusCode() != 202, RECOVERY_BOUND,
                    "the payment settled");
            assertEquals(201, settled.statusCode(), settled.asString());
            assertChargedOnce(buyer, firstAnswer.jsonPath().getLong("paymentId"));
            Thread.sleep(1500); // past the requeue pause: the redelivery has been settled one way or the other
            GetResponse dead = broker.poll(Broker.DEAD_LETTERS);
            while (dead != null && !buyer.key.equals(dead.getProps().getMessageId())) {
                dead = broker.poll(Broker.DEAD_LETTERS);
            }
            if (dead != null) {
                String reason = String.valueOf(dead.getProps().getHeaders().get(CommandConsumer.REASON_HEADER));
                assertTrue(reason.startsWith("409 PAYMENT_IN_PROGRESS") && reason.contains("no reply-to"), reason);
            }
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
                    "a user as a number", "{\"type\":\"pay\",\"userId\":" + System.nanoTime() + ",\"orderId\":" + buyer.order
                            + ",\"method\":\"card\",\"cardToken\":\"tok_visa\"}");
            Map<String, String> reasons = deadLetterReasons(broker, replies, commands);

            reasons.forEach((what, reason) -> assertTrue(reason.startsWith("the body is not"), what + ": " + reason));
            assertEquals(0, broker.messageCount(replies), "no reply for what was never a pay");
            assertEquals("UNPAID", db.orderStatus(buyer.order));
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
            reasonById.put(dead.getProps().getMessageId(), String.valueOf(dead.getProps().getHeaders().get(CommandConsumer.REASON_HEADER)));
        }
        Map<String, String> reasons = new HashMap<>();
        keys.forEach((what, key) -> reasons.put(what, reasonById.get(key)));
        return reasons;
    }

    /** Returns once the order is PAYING: the first pay's transaction committed, its lease held, its charge on its way. */
    private void awaitCharging(CardBuyer buyer) {
        Await.until(() -> "PAYING".equals(db.orderStatus(buyer.order)), WITHIN, "the first pay's charge to be on its way");
    }

    /** One payment of the order, one charge at the processor, made by one request under the payment's key. */
    private void assertChargedOnce(CardBuyer buyer, long payment) {
        assertEquals(1, db.count("SELECT COUNT(*) FROM pay_record WHERE order_id = ?", buyer.order));
        assertEquals(1, chargesOf(buyer));
        assertEquals(1, processor().chargeRequestsUnder(buyer.processorKey(payment)));
        assertEquals("PAID", db.orderStatus(buyer.order));
    }

    private static long chargesOf(CardBuyer buyer) {
        return processor().charges().stream().filter(c -> c.reference().equals("order-" + buyer.order)).count();
    }

    private static GetResponse send(Broker broker, String key, String replies, String body) throws Exception {
        String correlation = UUID.randomUUID().toString();
        broker.publish(Broker.COMMANDS, "pay", Broker.commandProperties(key, replies, correlation), body);
        return broker.await(replies, m -> correlation.equals(m.getProps().getCorrelationId()), WITHIN);
    }

    /** As a patient sender: the same command under the same message-id again while the reply is a 202; fails after the recovery bound. */
    private static GetResponse sendUntilDefinite(Broker broker, String key, String replies, String body) throws Exception {
        return Await.until(() -> send(broker, key, replies, body), reply -> Replies.status(reply) != 202, RECOVERY_BOUND,
                "a reply other than 202 to the command sent again");
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }

    /** A user with an account (no balance needed: the card pays), a bearer token, an unpaid order and a key. */
    private record CardBuyer(String userId, String bearer, long order, String key) {

        static CardBuyer withOrder(long amount) {
            Buyer.Checkout checkout = Buyer.withBalance(0).checkout(amount);
            return new CardBuyer(checkout.userId(), checkout.bearer(), checkout.order(), checkout.key());
        }

        Response payOverHttp(String key, String cardToken) {
            return Api.payByCard(bearer, order, key, cardToken);
        }

        String cardCommand(String cardToken) {
            return command(",\"method\":\"card\",\"cardToken\":\"" + cardToken + "\"");
        }

        /** A pay command for this order, with {@code more} fields after its user and order. */
        String command(String more) {
            return "{\"type\":\"pay\",\"userId\":\"" + userId + "\",\"orderId\":" + order + more + "}";
        }

        String processorKey(long payment) {
            return Api.as(bearer).get("/payments/" + payment).jsonPath().getString("processorKey");
        }
    }
}
