package io.payonce.commands;

import com.rabbitmq.client.GetResponse;
import io.payonce.support.Broker;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.RowHolder;
import io.quarkus.test.junit.QuarkusTest;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An instance handles several commands at once: one that waits on a store does not hold back the
 * next, and commands under many keys that race for one order still pay it once, as concurrent HTTP pays do.
 */
@QuarkusTest
@ExtendWith(LedgerInvariants.class)
class ConcurrentCommandsTest {

    /**
     * Shorter than the test profile's 2 s statement timeout: a consumer that took one command at a time
     * could answer the second only once the first's debit had timed out on the held row.
     */
    private static final Duration BEFORE_THE_FIRST_TIMES_OUT = Duration.ofMillis(1500);
    private static final Duration WITHIN = Duration.ofSeconds(20);

    private final Database db = Database.forTests();

    @ConfigProperty(name = "payonce.commands.in-flight")
    int inFlight;

    @Test
    void aCommandWaitingOnARowDoesNotHoldBackTheNext() throws Exception {
        Checkout waiting = Buyer.withBalance(5000).checkout(1200);
        Checkout next = Buyer.withBalance(5000).checkout(700);
        String waitingKey = "msg-" + UUID.randomUUID();
        String nextKey = "msg-" + UUID.randomUUID();
        CompletableFuture<Void> release = new CompletableFuture<>();
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            // Each consumer holds one command: with all of them subscribed, the next cannot land behind the waiting one.
            assertTrue(inFlight >= 2, "this test needs two commands in flight");
            broker.awaitConsumers(Broker.COMMANDS, inFlight, WITHIN);
            CompletableFuture<Void> released = RowHolder.holdAccountRowUntil(db, waiting.userId(), release);

            broker.sendPay(waitingKey, replies, waitingKey, waiting.userId(), waiting.order());
            db.awaitDebitWaitingFor(waiting.userId());
            broker.sendPay(nextKey, replies, nextKey, next.userId(), next.order());
            GetResponse nextAnswer = broker.await(replies, m -> nextKey.equals(m.getProps().getCorrelationId()), BEFORE_THE_FIRST_TIMES_OUT);
            boolean firstStillWaiting = db.payments(waiting.order()) == 0;
            release.complete(null);
            released.get();
            GetResponse waitingAnswer = broker.await(replies, m -> waitingKey.equals(m.getProps().getCorrelationId()), WITHIN);

            assertEquals(201, Replies.status(nextAnswer), Broker.text(nextAnswer));
            assertEquals(true, firstStillWaiting, "the second command was answered while the first waited on its row");
            assertEquals(201, Replies.status(waitingAnswer), Broker.text(waitingAnswer));
            assertEquals(3800, db.balance(waiting.userId()));
            assertEquals(4300, db.balance(next.userId()));
        }
    }

    @Test
    void commandsUnderManyKeysForOneOrderPayItOnce() throws Exception {
        Checkout payer = Buyer.withBalance(50_000).checkout(1200);
        int commands = 24;
        String correlation = UUID.randomUUID().toString();
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();

            for (int i = 0; i < commands; i++) {
                broker.publish(Broker.COMMANDS, "pay", Broker.commandProperties("msg-" + UUID.randomUUID(), replies, correlation),
                        Broker.payCommand(payer.userId(), payer.order()));
            }
            List<GetResponse> answers = broker.awaitAll(replies, commands, m -> correlation.equals(m.getProps().getCorrelationId()), WITHIN);

            // An order already paid answers a pay under another key with its one payment, marked as a repeat.
            assertEquals(1, answers.stream().map(Broker::text).distinct().count(), "one payment in every answer");
            assertEquals(List.of(201), answers.stream().map(Replies::status).distinct().toList());
            assertEquals(1, answers.stream().filter(answer -> !Replies.repeat(answer)).count(), "one command paid, the others found it paid");
            assertEquals(1, db.payments(payer.order()));
            assertEquals(48_800, db.balance(payer.userId()));
        }
    }
}
