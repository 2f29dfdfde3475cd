package io.payonce.commands;

import com.rabbitmq.client.GetResponse;
import io.payonce.commands.settlement.MessageSettlement;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Broker;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.payonce.support.UserLock;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.payonce.commands.CardCommands.NO_REPLY_TO;
import static io.payonce.commands.CardCommands.WITHIN;
import static io.payonce.commands.CardCommands.assertChargedOnce;
import static io.payonce.commands.CardCommands.awaitChargeHeld;
import static io.payonce.commands.CardCommands.awaitSettled;
import static io.payonce.commands.CardCommands.processor;
import static io.payonce.commands.CardCommands.send;
import static io.payonce.commands.CardCommands.settled;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A card pay command meeting its twin while the processor holds the twin's charge
 * ({@link Fault#HELD}) until the test lets go: what the command is told, and whether it is acked,
 * sent back to the queue or dead-lettered, each forced, never left to the consumer's one-second
 * pause between deliveries. On {@link BoundsOutlastHolds}: the test profile's 1 s processor timeout
 * would give the held charge up, answer 202 and end the twin's hold before the test judged the race.
 */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@WithTestResource(value = ProcessorSimulatorResource.class, scope = TestResourceScope.GLOBAL)
@ExtendWith(LedgerInvariants.class)
class HeldCardChargeCommandTest {

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

    /**
     * The first pay under the key holds its charge at a processor that keeps it until the test lets go
     * (HTTP here; another instance's consumer alike): the command under the same key is answered 409 at
     * once and acked, not requeued round the consumer until the charge ends; sent again later, it gets
     * the payment.
     */
    @Test
    void aCardPayCommandWhileItsTwinHoldsTheChargeIsReplied409AndAResendLaterGetsThePayment() throws Exception {
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            CardBuyer buyer = CardBuyer.withOrder(900);
            processor().failNextChargeOf(buyer.order(), Fault.HELD);

            CompletableFuture<Response> first = CompletableFuture.supplyAsync(() -> buyer.payOverHttp(buyer.key(), "tok_visa"));
            awaitChargeHeld(buyer);
            double executed = settled(meters, "executed");
            double requeued = settled(meters, "requeued");
            String correlation = UUID.randomUUID().toString();
            broker.publish(Broker.COMMANDS, "pay", Broker.commandProperties(buyer.key(), replies, correlation), buyer.cardCommand("tok_visa"));
            GetResponse whileCharging = broker.await(replies, m -> correlation.equals(m.getProps().getCorrelationId()), WITHIN);
            // Counted as it is settled, after its reply: acked, or it would have been counted sent back to the queue.
            awaitSettled(meters, "executed", executed, "the command told 409 acked after its reply");
            boolean heldMeanwhile = processor().heldChargesOf(buyer.order()) == 1 && !first.isDone();
            processor().release(buyer.order());
            Response firstAnswer = first.get(WITHIN.toSeconds(), TimeUnit.SECONDS);

            assertTrue(heldMeanwhile, "set-up: the twin held its charge until the command was answered and acked");
            assertEquals(409, Replies.status(whileCharging), Broker.text(whileCharging));
            assertEquals("PAYMENT_IN_PROGRESS", JsonPath.from(Broker.text(whileCharging)).getString("code"));
            assertEquals(requeued, settled(meters, "requeued"), "acked, not sent back to the queue");
            assertEquals(0, broker.messageCount(replies), "no second reply");
            assertEquals(201, firstAnswer.statusCode(), firstAnswer.asString());
            GetResponse later = send(broker, buyer.key(), replies, buyer.cardCommand("tok_visa"));
            assertEquals(201, Replies.status(later), Broker.text(later));
            long payment = firstAnswer.jsonPath().getLong("paymentId");
            assertEquals(payment, JsonPath.from(Broker.text(later)).getLong("paymentId"), "the first pay's payment");
            assertChargedOnce(db, buyer, payment);
        }
    }

    /**
     * A command with no reply-to under the key of a pay whose charge the processor holds for as long as
     * the test needs: its first delivery is told 409 PAYMENT_IN_PROGRESS and goes back to the queue
     * rather than being acked; its redelivery, the twin still charging, is told the same and
     * dead-lettered with the code as its reason, never acked unheard. The charge, let go, is made once.
     */
    @Test
    void aCardPayCommandWithoutReplyToRedeliveredWhileItsTwinStillHoldsTheChargeIsDeadLetteredNotAcked() throws Exception {
        try (Broker broker = Broker.connect()) {
            CardBuyer buyer = CardBuyer.withOrder(910);
            processor().failNextChargeOf(buyer.order(), Fault.HELD);
            CompletableFuture<Response> first = CompletableFuture.supplyAsync(() -> buyer.payOverHttp(buyer.key(), "tok_visa"));
            awaitChargeHeld(buyer);

            broker.publish(Broker.COMMANDS, "pay", Broker.commandProperties(buyer.key(), NO_REPLY_TO, buyer.key()), buyer.cardCommand("tok_visa"));
            GetResponse dead = broker.await(Broker.DEAD_LETTERS, m -> buyer.key().equals(m.getProps().getMessageId()), WITHIN);
            boolean heldMeanwhile = processor().heldChargesOf(buyer.order()) == 1 && !first.isDone();
            processor().release(buyer.order());
            Response firstAnswer = first.get(WITHIN.toSeconds(), TimeUnit.SECONDS);

            assertTrue(heldMeanwhile, "set-up: the twin held its charge until the redelivery was dead-lettered");
            String reason = String.valueOf(dead.getProps().getHeaders().get(MessageSettlement.REASON_HEADER));
            assertTrue(reason.startsWith("409 PAYMENT_IN_PROGRESS") && reason.contains("when it came back") && reason.contains("no reply-to"),
                    reason);
            assertEquals(201, firstAnswer.statusCode(), firstAnswer.asString());
            assertChargedOnce(db, buyer, firstAnswer.jsonPath().getLong("paymentId"));
        }
    }

    /**
     * A command with no reply-to under the key of a pay whose charge the processor holds: its first
     * delivery is told 409 PAYMENT_IN_PROGRESS and goes back to the queue; its redelivery comes once the
     * payment has settled, replays it and is acked, never dead-lettered. The card is charged once.
     *
     * <p>The redelivery is held at its claim of the key until the payment has settled, whatever the
     * consumer's pause between the deliveries: a trigger of the test's makes every claim of the key pass
     * two user locks in turn, an airlock. The first delivery's claim passes the outer door and waits at
     * the inner one while the test shuts the outer door behind it; only then is the inner door opened, so
     * the next claim, the redelivery's, waits at the outer door while the test lets the charge go.
     */
    @Test
    void aCardPayCommandWithoutReplyToRedeliveredOnceItsTwinHasSettledReplaysThePaymentNotDeadLettered() throws Exception {
        CardBuyer buyer = CardBuyer.withOrder(920);
        processor().failNextChargeOf(buyer.order(), Fault.HELD);
        CompletableFuture<Response> first = CompletableFuture.supplyAsync(() -> buyer.payOverHttp(buyer.key(), "tok_visa"));
        awaitChargeHeld(buyer);
        // The first pay's own claim is behind it: only the command's deliveries claim the key from here on.
        try (Broker broker = Broker.connect(); UserLock outerDoor = UserLock.hold(db); UserLock innerDoor = UserLock.hold(db)) {
            // A run that died before its DROP left the trigger behind.
            db.update("DROP TRIGGER IF EXISTS test_claims_one_at_a_time");
            db.update("CREATE TRIGGER test_claims_one_at_a_time BEFORE INSERT ON idempotency_record FOR EACH ROW IF NEW.idem_key = '"
                    + buyer.key() + "' THEN " + outerDoor.waitStatement() + "; " + innerDoor.waitStatement() + "; END IF");
            double requeued = settled(meters, "requeued");
            double deadLettered = settled(meters, "dead_lettered");

            broker.publish(Broker.COMMANDS, "pay", Broker.commandProperties(buyer.key(), NO_REPLY_TO, buyer.key()), buyer.cardCommand("tok_visa"));
            outerDoor.awaitWaiter(db);
            outerDoor.release();
            innerDoor.awaitWaiter(db);
            outerDoor.takeAgain();
            innerDoor.release();
            // Told 409 while its twin still charges, the first delivery goes back to the queue; its redelivery's claim waits here.
            outerDoor.awaitWaiter(db);
            boolean requeuedWhileHeld = settled(meters, "requeued") > requeued && processor().heldChargesOf(buyer.order()) == 1;
            processor().release(buyer.order());
            Response firstAnswer = first.get(WITHIN.toSeconds(), TimeUnit.SECONDS);
            long redeliveriesWaiting = outerDoor.waiting(db);
            double replayed = settled(meters, "replayed");
            outerDoor.release();
            awaitSettled(meters, "replayed", replayed, "the redelivery replaying the settled payment, acked");

            assertTrue(requeuedWhileHeld, "set-up: the first delivery went back to the queue while its twin held the charge");
            assertEquals(1, redeliveriesWaiting, "set-up: the redelivery's claim waited until the payment had settled");
            assertEquals(201, firstAnswer.statusCode(), firstAnswer.asString());
            assertEquals(deadLettered, settled(meters, "dead_lettered"), "nothing dead-lettered");
            assertEquals(0, broker.deadLetters(Set.of(buyer.key())), "the command is not among the dead letters");
            assertChargedOnce(db, buyer, firstAnswer.jsonPath().getLong("paymentId"));
        } finally {
            // After the locks' sessions have ended: a claim still in the trigger would hold up the DROP.
            db.update("DROP TRIGGER IF EXISTS test_claims_one_at_a_time");
        }
    }
}
