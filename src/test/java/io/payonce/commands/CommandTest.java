package io.payonce.commands;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.GetResponse;
import io.payonce.commands.settlement.MessageSettlement;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Broker;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Management;
import io.payonce.support.RequestsInFlight;
import io.payonce.support.RowHolder;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Pay and refund commands through RabbitMQ: the message id is the key, a redelivery or a copy gets
 * the first answer and moves no money again, refusals are answers, and what can never succeed goes
 * to the dead-letter queue with its reason. Real RabbitMQ, real MariaDB. On {@link BoundsOutlastHolds},
 * so that the pay held back under a row of the test's waits in one attempt until the test lets go,
 * instead of being run again every second of the test profile's lock wait and given up after about
 * 4 s, its pay lock given back, while the set-up is still watching; nothing here depends on that lock
 * wait, the retries or the processor's timeout.
 */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@ExtendWith(LedgerInvariants.class)
class CommandTest {

    private static final String COMMANDS = Broker.COMMANDS;
    private static final String DEAD_LETTERS = Broker.DEAD_LETTERS;
    private static final Duration WITHIN = Duration.ofSeconds(15);

    private final Database db = Database.forTests();

    @Test
    void aPayCommandPaysOnceAndItsRedeliveryRepliesWithTheSameAnswer() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            Checkout payer = Buyer.withBalance(5000).checkout(1200);
            String key = "msg-" + UUID.randomUUID();

            GetResponse first = send(broker, key, replies, Broker.payCommand(payer.userId(), payer.order()));
            GetResponse again = send(broker, key, replies, Broker.payCommand(payer.userId(), payer.order()));

            assertEquals(201, Replies.status(first), Broker.text(first));
            assertEquals(false, Replies.repeat(first));
            assertEquals(Broker.text(first), Broker.text(again), "the redelivery gets the first answer");
            assertEquals(true, Replies.repeat(again));
            assertEquals(1, db.payments(payer.order()));
            assertEquals(3800, db.balance(payer.userId()));
        }
    }

    /**
     * Another session holds the payer's account row: whichever of the fifty takes the pay lock first
     * waits in its debit, its claim of the key open, until a pay by HTTP has been told to retry and a
     * pay command sent back to the queue: both edges meet it in flight every time.
     */
    @Test
    void oneKeyByHttpAndByMessageAtOnceIsOneOperation() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            Checkout payer = Buyer.withBalance(5000).checkout(1200);
            String key = "msg-" + UUID.randomUUID();
            String correlation = UUID.randomUUID().toString();
            double requeuedBefore = messages("requeued");
            AtomicInteger toldToRetry = new AtomicInteger();
            List<Callable<Response>> overHttp = new ArrayList<>();
            for (int i = 0; i < 25; i++) {
                overHttp.add(() -> Api.untilSettled(() -> countingRetries(Api.pay(payer.bearer(), payer.order(), key), toldToRetry)));
            }
            List<Response> httpAnswers;
            double sentBack;
            int retriesTold;
            CompletableFuture<Void> release = new CompletableFuture<>();
            CompletableFuture<Void> rowReleased = RowHolder.holdAccountRowUntil(db, payer.userId(), release);
            try {
                for (int i = 0; i < 25; i++) {
                    broker.publish(COMMANDS, "pay", Broker.commandProperties(key, replies, correlation), Broker.payCommand(payer.userId(), payer.order()));
                }
                try (RequestsInFlight<Response> http = RequestsInFlight.start(overHttp)) {
                    db.awaitDebitWaitingFor(payer.userId());
                    Await.until(() -> messages("requeued") > requeuedBefore && toldToRetry.get() > 0, WITHIN,
                            "a pay command sent back to the queue and a pay by HTTP told to retry, while the first waited in its debit");
                    sentBack = messages("requeued") - requeuedBefore;
                    retriesTold = toldToRetry.get();
                    release.complete(null);
                    httpAnswers = http.answers();
                }
            } finally {
                release.complete(null); // when the set-up failed too, not after the holder's 30 s
            }
            rowReleased.get(10, TimeUnit.SECONDS);
            List<GetResponse> messageAnswers = broker.awaitAll(replies, 25, m -> correlation.equals(m.getProps().getCorrelationId()), WITHIN);

            assertTrue(sentBack > 0 && retriesTold > 0, "set-up: while the first pay waited in its debit, pay commands were sent back "
                    + "to the queue (" + sentBack + ") and pays by HTTP told to retry (" + retriesTold + ")");
            List<String> bodies = new ArrayList<>();
            httpAnswers.forEach(answer -> bodies.add(answer.statusCode() + " " + answer.asString()));
            messageAnswers.forEach(answer -> bodies.add(Replies.status(answer) + " " + Broker.text(answer)));
            assertEquals(1, bodies.stream().distinct().count(), "50 answers, one answer: " + bodies.stream().distinct().toList());
            long firsts = httpAnswers.stream().filter(a -> a.header("Idempotent-Replayed") == null).count()
                    + messageAnswers.stream().filter(m -> !Replies.repeat(m)).count();
            assertEquals(1, firsts, "one execution, 49 repeats");
            assertEquals(1, db.payments(payer.order()));
            assertEquals(3800, db.balance(payer.userId()));
        }
    }

    @Test
    void aRefusalIsAnAnswerRepliedAndAcked() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            Checkout payer = Buyer.withBalance(100).checkout(1200);
            String key = "msg-" + UUID.randomUUID();
            double executedBefore = messages("executed");
            double requeuedBefore = messages("requeued");

            GetResponse refused = send(broker, key, replies, Broker.payCommand(payer.userId(), payer.order()));
            GetResponse stranger = send(broker, "msg-" + UUID.randomUUID(), replies, Broker.payCommand(Tokens.newUserId(), payer.order()));

            assertEquals(402, Replies.status(refused), Broker.text(refused));
            assertEquals("INSUFFICIENT_FUNDS", JsonPath.from(Broker.text(refused)).getString("code"));
            assertEquals(404, Replies.status(stranger), "only the owner's order can be paid: " + Broker.text(stranger));
            assertEquals(0, db.payments(payer.order()));
            // Each command is counted as it is acked, after its reply: once both are, neither can come back for a second try.
            Await.until(() -> messages("executed") - executedBefore >= 2, WITHIN, "both commands acked");
            assertEquals(requeuedBefore, messages("requeued"), "acked, not sent back to the queue");
            assertEquals(0, broker.messageCount(replies), "acked: no second try, no second reply");
        }
    }

    @Test
    void aCommandThatCanNeverSucceedIsDeadLetteredWithItsReason() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            String unreadable = "msg-" + UUID.randomUUID();
            String keyless = "{\"type\":\"pay\",\"userId\":\"" + Tokens.newUserId() + "\",\"orderId\":" + Long.MAX_VALUE + "}";
            String invalid = "msg-" + UUID.randomUUID();

            broker.publish(COMMANDS, "pay", Broker.commandProperties(unreadable, replies, unreadable), "{\"type\":\"pay\",");
            broker.publish(COMMANDS, "pay", new AMQP.BasicProperties.Builder().userId(Broker.USER).replyTo(replies).build(), keyless);
            broker.publish(COMMANDS, "refund", Broker.commandProperties(invalid, replies, invalid), "{\"type\":\"refund\",\"orderId\":1,\"refundNo\":\"r 1\",\"amount\":-5}");
            String unsigned = "msg-" + UUID.randomUUID();
            broker.publish(COMMANDS, "pay", new AMQP.BasicProperties.Builder().messageId(unsigned).replyTo(replies)
                    .headers(Map.of(MessageSettlement.SENDER_HEADER, "ops")).build(), Broker.payCommand(Tokens.newUserId(), 1));
            String elsewhere = "msg-" + UUID.randomUUID();
            broker.publish(COMMANDS, "pay", Broker.commandProperties(elsewhere, "billing.replies", elsewhere), Broker.payCommand(Tokens.newUserId(), 1));

            // Commands are handled several at a time: their copies reach the dead-letter queue in any order.
            Set<String> ids = Set.of(unreadable, invalid, unsigned, elsewhere);
            List<GetResponse> dead = broker.awaitAll(DEAD_LETTERS, 5,
                    m -> keyless.equals(Broker.text(m)) || m.getProps().getMessageId() != null && ids.contains(m.getProps().getMessageId()), WITHIN);
            GetResponse unreadableDead = withId(dead, unreadable);
            GetResponse keylessDead = dead.stream().filter(m -> keyless.equals(Broker.text(m))).findFirst().orElseThrow();
            GetResponse invalidDead = withId(dead, invalid);
            GetResponse unsignedDead = withId(dead, unsigned);
            GetResponse elsewhereDead = withId(dead, elsewhere);

            assertTrue(reason(unreadableDead).contains("not a pay or refund command"), reason(unreadableDead));
            assertTrue(reason(keylessDead).contains("message-id"), reason(keylessDead));
            assertTrue(reason(invalidDead).contains("amount") && reason(invalidDead).contains("refundNo"), reason(invalidDead));
            assertTrue(reason(unsignedDead).contains("user-id"), "no sender, no command: " + reason(unsignedDead));
            assertTrue(reason(elsewhereDead).contains("reply-to"), "never a reply into another service's queue: " + reason(elsewhereDead));
            assertEquals(Broker.USER, String.valueOf(elsewhereDead.getProps().getHeaders().get(MessageSettlement.SENDER_HEADER)),
                    "the copy names its broker-checked sender");
            assertFalse(unsignedDead.getProps().getHeaders().containsKey(MessageSettlement.SENDER_HEADER),
                    "a sender the message only claims is not named");
            assertEquals("{\"type\":\"pay\",", Broker.text(unreadableDead), "the message as it came");
            assertEquals(0, broker.messageCount(replies), "no reply for what was never a command");
            assertEquals(0, broker.messageCount(COMMANDS));
        }
    }

    @Test
    void aMessageIdIsAKeyBoundToItsCommand() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            Buyer buyer = Buyer.withBalance(5000);
            long first = buyer.newOrder(100);
            long second = buyer.newOrder(200);
            String key = "msg-" + UUID.randomUUID();

            GetResponse paid = send(broker, key, replies, Broker.payCommand(buyer.userId(), first));
            GetResponse reused = send(broker, key, replies, Broker.payCommand(buyer.userId(), second));
            Response overHttp = Api.pay(buyer.bearer(), second, key);

            assertEquals(201, Replies.status(paid), Broker.text(paid));
            assertEquals(422, Replies.status(reused), Broker.text(reused));
            assertEquals("IDEMPOTENCY_KEY_REUSED", JsonPath.from(Broker.text(reused)).getString("code"));
            assertEquals(422, overHttp.statusCode(), "the message's key is the user's key over HTTP too: " + overHttp.asString());
            assertEquals(0, db.payments(second));
        }
    }

    @Test
    void aRefundCommandRefundsOnceAsOpsWould() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            Checkout payer = Buyer.withBalance(5000).checkout(1000);
            assertEquals(201, Api.pay(payer.bearer(), payer.order(), Api.newKey()).statusCode());
            String key = "msg-" + UUID.randomUUID();
            String refund = "{\"type\":\"refund\",\"orderId\":" + payer.order() + ",\"refundNo\":\"r-1\",\"amount\":300}";

            GetResponse refunded = send(broker, key, replies, refund);
            GetResponse again = send(broker, key, replies, refund);

            assertEquals(201, Replies.status(refunded), Broker.text(refunded));
            assertEquals(Broker.text(refunded), Broker.text(again));
            assertEquals(true, Replies.repeat(again));
            assertEquals(4300, db.balance(payer.userId()));
        }
    }

    /**
     * Command messages by what became of them ({@code payonce.messages}): executed, replayed, requeued,
     * ... Read from the management endpoint, as an {@code *IT} against the packaged application can.
     */
    private static double messages(String outcome) {
        return Management.sample(Management.metrics(), "payonce_messages_total{outcome=\"" + outcome + "\"}");
    }

    /** {@code answer}, counted on {@code toldToRetry} when it says to come back (Retry-After): a twin was in flight. */
    private static Response countingRetries(Response answer, AtomicInteger toldToRetry) {
        if (answer.header("Retry-After") != null) {
            toldToRetry.incrementAndGet();
        }
        return answer;
    }

    private static GetResponse send(Broker broker, String key, String replies, String body) throws Exception {
        String correlation = UUID.randomUUID().toString();
        broker.publish(COMMANDS, "pay", Broker.commandProperties(key, replies, correlation), body);
        return broker.await(replies, m -> correlation.equals(m.getProps().getCorrelationId()), WITHIN);
    }

    private static GetResponse withId(List<GetResponse> messages, String messageId) {
        return messages.stream().filter(m -> messageId.equals(m.getProps().getMessageId())).findFirst().orElseThrow();
    }

    private static String reason(GetResponse deadLetter) {
        Object reason = deadLetter.getProps().getHeaders().get(MessageSettlement.REASON_HEADER);
        assertFalse(reason == null, "the reason is in the headers");
        return reason.toString();
    }
}
