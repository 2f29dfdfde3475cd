package io.payonce.commands;

import com.rabbitmq.client.GetResponse;
import io.payonce.support.Await;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Broker;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.payonce.support.RowHolder;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An instance handles several commands at once: one that waits on a store does not hold back the
 * next, and commands under many keys that race for one order still pay it once, as concurrent HTTP pays do.
 * On {@link BoundsOutlastHolds}: the command held back under a row of the test's waits in its debit in
 * one attempt until the test lets go, not run again every second of the test profile's lock wait and
 * given up after about 4 s, its pay lock given back, while the set-up is still watching. Nothing here
 * depends on that lock wait, the retries or the processor's timeout.
 */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@ExtendWith(LedgerInvariants.class)
class ConcurrentCommandsTest {

    /**
     * Shorter than the profile's 20 s lock wait, and the row is held until the second command is
     * answered: a consumer that took one command at a time could answer the second only once the first's
     * debit had given up on the held row, 20 s after it began to wait. 10 s is ample for a loaded
     * machine to answer one command, and well short of that.
     */
    private static final Duration BEFORE_THE_FIRST_TIMES_OUT = Duration.ofSeconds(10);
    private static final Duration WITHIN = Duration.ofSeconds(20);

    private final Database db = Database.forTests();

    @ConfigProperty(name = "payonce.commands.in-flight")
    int inFlight;

    @Inject
    Meters meters;

    @Test
    void aCommandWaitingOnARowDoesNotHoldBackTheNext() throws Exception {
        Checkout waiting = Buyer.withBalance(5000).checkout(1200);
        Checkout next = Buyer.withBalance(5000).checkout(700);
        String waitingKey = "msg-" + UUID.randomUUID();
        String nextKey = "msg-" + UUID.randomUUID();
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            // Each consumer holds one command: with all of them subscribed, the next cannot land behind the waiting one.
            assertTrue(inFlight >= 2, "this test needs two commands in flight");
            broker.awaitConsumers(Broker.COMMANDS, inFlight, WITHIN);
            CompletableFuture<Void> release = new CompletableFuture<>();
            CompletableFuture<Void> released = RowHolder.holdAccountRowUntil(db, waiting.userId(), release);
            GetResponse nextAnswer;
            boolean firstStillWaiting;
            try {
                broker.sendPay(waitingKey, replies, waitingKey, waiting.userId(), waiting.order());
                db.awaitDebitWaitingFor(waiting.userId());
                broker.sendPay(nextKey, replies, nextKey, next.userId(), next.order());
                nextAnswer = broker.await(replies, m -> nextKey.equals(m.getProps().getCorrelationId()), BEFORE_THE_FIRST_TIMES_OUT);
                firstStillWaiting = db.payments(waiting.order()) == 0;
            } finally {
                release.complete(null); // when the set-up failed too, not after the holder's 30 s
            }
            released.get(10, TimeUnit.SECONDS);
            GetResponse waitingAnswer = broker.await(replies, m -> waitingKey.equals(m.getProps().getCorrelationId()), WITHIN);

            assertEquals(201, Replies.status(nextAnswer), Broker.text(nextAnswer));
            assertEquals(true, firstStillWaiting, "the second command was answered while the first waited on its row");
            assertEquals(201, Replies.status(waitingAnswer), Broker.text(waitingAnswer));
            assertEquals(3800, db.balance(waiting.userId()));
            assertEquals(4300, db.balance(next.userId()));
        }
    }

    /**
     * Another session holds the payer's account row: the command that takes the order's pay lock first
     * waits in its debit, until the commands the other consumers hold meet that lock and are sent back to
     * the queue ("not now"); they find the order paid when they come back.
     */
    @Test
    void commandsUnderManyKeysForOneOrderPayItOnce() throws Exception {
        Checkout payer = Buyer.withBalance(50_000).checkout(1200);
        int commands = 24;
        String correlation = UUID.randomUUID().toString();
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            assertTrue(inFlight >= 2, "this test needs two commands in flight");
            broker.awaitConsumers(Broker.COMMANDS, inFlight, WITHIN);
            double requeuedBefore = requeued();
            CompletableFuture<Void> release = new CompletableFuture<>();
            CompletableFuture<Void> rowReleased = RowHolder.holdAccountRowUntil(db, payer.userId(), release);
            double sentBack;
            try {
                for (int i = 0; i < commands; i++) {
                    broker.publish(Broker.COMMANDS, "pay", Broker.commandProperties("msg-" + UUID.randomUUID(), replies, correlation),
                            Broker.payCommand(payer.userId(), payer.order()));
                }
                db.awaitDebitWaitingFor(payer.userId());
                Await.until(() -> requeued() > requeuedBefore, WITHIN, "a command sent back to the queue while the first waited in its debit");
                sentBack = requeued() - requeuedBefore;
            } finally {
                release.complete(null); // when the set-up failed too, not after the holder's 30 s
            }
            rowReleased.get(10, TimeUnit.SECONDS);
            List<GetResponse> answers = broker.awaitAll(replies, commands, m -> correlation.equals(m.getProps().getCorrelationId()), WITHIN);

            assertTrue(sentBack > 0, "set-up: commands met the pay in flight and were sent back to the queue: " + sentBack);
            // An order already paid answers a pay under another key with its one payment, marked as a repeat.
            assertEquals(1, answers.stream().map(Broker::text).distinct().count(), "one payment in every answer");
            assertEquals(List.of(201), answers.stream().map(Replies::status).distinct().toList());
            assertEquals(1, answers.stream().filter(answer -> !Replies.repeat(answer)).count(), "one command paid, the others found it paid");
            assertEquals(1, db.payments(payer.order()));
            assertEquals(48_800, db.balance(payer.userId()));
        }
    }

    private double requeued() {
        return meters.count("payonce.messages", "outcome", "requeued");
    }
}
