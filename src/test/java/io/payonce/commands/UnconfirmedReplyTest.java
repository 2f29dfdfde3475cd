package io.payonce.commands;

import com.rabbitmq.client.GetResponse;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Broker;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.payonce.support.Tokens;
import io.payonce.support.UserLock;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.path.json.JsonPath;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A command whose effect committed but whose reply the broker refused, while the consumer's own
 * channel stays open (the reply queue is full and rejects publishes): the command is not acked. It
 * goes back to the queue, and its redelivery replies with the stored answer, under the same key, and
 * moves no money again. Each test gives the redelivery an answer that only the stored one can be:
 * a repeat of a pay, and a 402 that a fresh run, after a deposit, would turn into a payment. The
 * refusal is held at a trigger until the deposit has committed, however long the deposit takes.
 */
@QuarkusTest
@TestProfile(UnconfirmedReplyTest.RoomBeforeTheRedelivery.class)
@ExtendWith(LedgerInvariants.class)
class UnconfirmedReplyTest {

    /**
     * {@link BoundsOutlastHolds}, and a command sent back to the queue stays away 5 s instead of 1: the
     * test makes room in the full reply queue once it sees the requeue counted, a single basic.get, and
     * the redelivery must find that room. Five seconds for one call is a failure deadline on any
     * machine the suite passes on, where one second was a race a stalled test thread could lose.
     */
    public static final class RoomBeforeTheRedelivery implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            Map<String, String> overrides = new HashMap<>(new BoundsOutlastHolds().getConfigOverrides());
            overrides.put("payonce.commands.requeue-after", REQUEUE_AFTER.toSeconds() + "s");
            return overrides;
        }
    }

    private static final Duration WITHIN = Duration.ofSeconds(15);
    private static final Duration REQUEUE_AFTER = Duration.ofSeconds(5);

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    @Test
    void aCommittedPayWhoseReplyIsRefusedIsRedeliveredAndAnsweredWithoutASecondDebit() throws Exception {
        Checkout payer = Buyer.withBalance(5000).checkout(1200);
        String key = "msg-" + UUID.randomUUID();
        try (Broker broker = Broker.connect()) {
            String replies = broker.fullReplyQueue();
            double requeued = requeued();

            broker.sendPay(key, replies, key, payer.userId(), payer.order());
            db.awaitPayment(payer.order());
            awaitRequeuedBeyond(requeued);
            long requeueSeen = System.nanoTime();
            broker.poll(replies);
            List<GetResponse> answers = broker.awaitRepliesUntilRepeat(replies, key, WITHIN);
            Duration away = Duration.ofNanos(System.nanoTime() - requeueSeen);
            Response overHttp = Api.pay(payer.bearer(), payer.order(), key);

            // Counted as the pause began, seen within the wait's 100 ms steps: the reply cannot come much sooner than the pause.
            assertTrue(away.compareTo(REQUEUE_AFTER.minusSeconds(1)) >= 0, "set-up: the command stayed away the configured pause, not "
                    + away.toMillis() + " ms");
            assertEquals(1, answers.size(), "the redelivery's reply, marked as a repeat");
            assertEquals(201, Replies.status(answers.get(0)), Broker.text(answers.get(0)));
            assertEquals(overHttp.asString(), Broker.text(answers.get(0)), "the key's one answer, by message and over HTTP");
            assertEquals(1, db.payments(payer.order()));
            assertEquals(3800, db.balance(payer.userId()));
        }
    }

    /**
     * The deposit lands between the run that refused and any redelivery, every time, not only when it
     * beats the consumer's one-second pause: the refusal stops just before it is stored, at a trigger of
     * the test's, until the deposit has committed. Only then is it stored, its reply refused, and the
     * command sent back to the queue.
     */
    @Test
    void aRedeliveryRepliesTheStoredRefusalEvenWhenARunNowWouldPay() throws Exception {
        Buyer buyer = Buyer.withBalance(100);
        long order = buyer.newOrder(1200);
        String key = "msg-" + UUID.randomUUID();
        try (Broker broker = Broker.connect()) {
            String replies = broker.fullReplyQueue();
            double requeued = requeued();

            boolean refusalUnstoredWhenDeposited;
            try (UserLock gate = UserLock.hold(db)) {
                // The refusal is stored by a claim of its own, answered (DONE); the run's claims before it are PROCESSING.
                db.update("CREATE TRIGGER test_refusal_waits AFTER INSERT ON idempotency_record FOR EACH ROW IF NEW.idem_key = '" + key
                        + "' AND NEW.status = 'DONE' THEN " + gate.waitStatement() + "; END IF");
                broker.sendPay(key, replies, key, buyer.userId(), order);
                gate.awaitWaiter(db);
                Response deposited = Api.deposit(Tokens.ops(), buyer.userId(), "fund-" + UUID.randomUUID(), 5000);
                assertEquals(201, deposited.statusCode(), deposited.asString());
                refusalUnstoredWhenDeposited = db.count("SELECT COUNT(*) FROM idempotency_record WHERE idem_key = ?", key) == 0;
                gate.release();
            }
            awaitRequeuedBeyond(requeued);
            broker.poll(replies);
            List<GetResponse> answers = broker.awaitRepliesUntilRepeat(replies, key, WITHIN);

            assertTrue(refusalUnstoredWhenDeposited, "set-up: the deposit committed after the run that refused and before its refusal was stored");
            assertEquals(1, answers.size(), "the redelivery's reply, marked as a repeat");
            assertEquals(402, Replies.status(answers.get(0)), "the stored answer, not a fresh run: " + Broker.text(answers.get(0)));
            assertEquals("INSUFFICIENT_FUNDS", JsonPath.from(Broker.text(answers.get(0))).getString("code"));
            assertEquals(0, db.payments(order));
            assertEquals(5100, db.balance(buyer.userId()));
        } finally {
            // At the end, not between the gate and the poll, which must come within the consumer's pause.
            db.update("DROP TRIGGER IF EXISTS test_refusal_waits");
        }
    }

    /**
     * The broker refused the reply and the consumer sent the command back to the queue. It counts the
     * requeue before its pause ({@link RoomBeforeTheRedelivery}), and the caller makes room in the reply
     * queue at once, inside the pause, before the redelivery replies. A thread slower than the pause
     * would see the redelivery's reply refused too and the redelivery acked without one: the test would
     * then fail for want of a reply marked as a repeat, never pass without it. Tests of this class run
     * one at a time, so the count is this command's.
     */
    private void awaitRequeuedBeyond(double before) {
        Await.until(() -> requeued() > before, WITHIN, "the command sent back to the queue after its reply was refused");
    }

    private double requeued() {
        return meters.count("payonce.messages", "outcome", "requeued");
    }
}
