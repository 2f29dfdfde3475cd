package io.payonce.payment.balance;

import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Buyer;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.payonce.support.RequestsInFlight;
import io.payonce.support.RowHolder;
import io.payonce.support.UserLock;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import static io.payonce.payment.balance.PipelinedPayTest.PIPELINED;
import static io.payonce.payment.balance.PipelinedPayTest.assertPaidOnce;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link PipelinedPayTest}'s pays that meet what the test holds: an account row held by a session of
 * the test's, or a pay held at its ledger line by a trigger of the test's, while other pays come. On
 * {@link BoundsOutlastHolds}, so that whatever waits behind the hold waits in the same statement until
 * the test lets go, instead of giving up after the test profile's 1 s lock wait or being cut off at its
 * 2 s statement bound.
 */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@ExtendWith(LedgerInvariants.class)
class PipelinedPayRacesTest {

    private final Database db = Database.forTests();
    private final ExecutorService client = Executors.newSingleThreadExecutor();

    @Inject
    Meters meters;

    @AfterEach
    void stopTheClient() {
        client.shutdownNow();
    }

    /**
     * Another session holds the account's row: the pipelined body's debit does not wait for it (no
     * lock wait on the pipelined pool) but fails at once, with the claim, the compare-and-set and the
     * payment sent before it still in the open transaction. Were COMMIT sent then, an order paid with
     * no money taken would be committed, and its key stuck. It is rolled back, and the sequential
     * transaction waits for the row and pays.
     */
    @Test
    void aBusyRowFailsThePipelinedBodyAtOnceAndTheSequentialPayWaitsForIt() throws Exception {
        Checkout payer = Buyer.withBalance(5000).checkout(1500);
        double failedBefore = meters.count(PIPELINED, "outcome", "failed");

        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> held = RowHolder.holdAccountRowUntil(db, payer.userId(), release);
        CompletableFuture<Response> pay;
        try {
            pay = CompletableFuture.supplyAsync(payer::pay, client);
            Await.until(() -> meters.count(PIPELINED, "outcome", "failed"), failed -> failed > failedBefore, Duration.ofSeconds(10),
                    "the pipelined body failing at the held row");
        } finally {
            release.complete(null); // when the set-up failed too, not after the holder's 30 s
        }
        held.get(10, TimeUnit.SECONDS);

        Response answer = pay.get(30, TimeUnit.SECONDS);
        assertEquals(201, answer.statusCode(), answer.asString());
        assertEquals(failedBefore + 1, meters.count(PIPELINED, "outcome", "failed"), "the pipelined body met the held row");
        assertPaidOnce(db, payer, 3500);
    }

    /**
     * One account's ledger line held after it is written (a trigger of the test's waits on a lock of
     * the test's, to the end of its statement) does not fail another account's pipelined pay: the ledger
     * line is a single-row insert, which takes account_entry's next id under a brief mutex. Written as
     * INSERT ... SELECT, a bulk insert to InnoDB, it held the table's AUTO-INC lock to the end of its
     * statement, and every other pay's pipelined body, which waits for no lock, failed on it at once
     * ("Failed to read auto-increment value"), to be sent again one statement at a time. The held line
     * is let go once the other pay has been answered, not after a fixed time.
     */
    @Test
    void aSlowLedgerLineOfOneAccountDoesNotFailAnotherAccountsPipelinedPay() throws Exception {
        Checkout slow = Buyer.withBalance(5000).checkout(1500);
        Checkout other = Buyer.withBalance(5000).checkout(1500);
        try (UserLock gate = UserLock.hold(db)) {
            db.update("CREATE TRIGGER test_slow_ledger_line AFTER INSERT ON account_entry FOR EACH ROW "
                    + "IF NEW.user_id = '" + slow.userId() + "' THEN " + gate.waitStatement() + "; END IF");
            double failedBefore = meters.count(PIPELINED, "outcome", "failed");
            double committedBefore = meters.count(PIPELINED, "outcome", "committed");
            CompletableFuture<Response> slowPay = CompletableFuture.supplyAsync(slow::pay, client);
            gate.awaitWaiter(db);

            Response answer = other.pay();
            long slowLinesBeingWritten = slowPay.isDone() ? 0 : gate.waiting(db);
            double failedWhileHeld = meters.count(PIPELINED, "outcome", "failed");
            gate.release();

            assertEquals(201, answer.statusCode(), answer.asString());
            assertEquals(1, slowLinesBeingWritten, "the slow ledger line was still being written");
            assertEquals(failedBefore, failedWhileHeld, "no pipelined body failed on the slow line");
            Response slowAnswer = slowPay.get(30, TimeUnit.SECONDS);
            assertEquals(201, slowAnswer.statusCode(), slowAnswer.asString());
            assertEquals(committedBefore + 2, meters.count(PIPELINED, "outcome", "committed"), "both pays committed pipelined");
            assertPaidOnce(db, slow, 3500);
            assertPaidOnce(db, other, 3500);
        } finally {
            // After the lock's session has ended: a pay still in the trigger would hold up the DROP.
            db.update("DROP TRIGGER IF EXISTS test_slow_ledger_line");
        }
    }

    /**
     * Twins of one key, other keys on the same order, and a second order on the same account that the
     * balance cannot also cover: one of the first order's pays is held after its debit, and the rest
     * come while it is: the first order is paid once and every answer about it names that payment; the
     * second is refused.
     */
    @Test
    void concurrentPaysOnOneOrderAndOneAccountPayOnce() throws Exception {
        Buyer buyer = Buyer.withBalance(2000);
        Checkout first = buyer.checkout(1500);
        Checkout second = buyer.checkout(1500);

        List<Response> answers = payWhileOneIsHeldAfterItsDebit(buyer.userId(), first::pay, List.of(
                first::pay, first::pay,
                () -> Api.pay(buyer.bearer(), first.order(), Api.newKey()),
                () -> Api.pay(buyer.bearer(), first.order(), Api.newKey()),
                second::pay));

        Response refusal = answers.get(5);
        List<Response> onFirst = answers.subList(0, 5).stream().filter(answer -> answer.statusCode() != 409).toList();
        assertEquals(1, db.payments(first.order()) + db.payments(second.order()), "one of the two orders was paid");
        assertEquals(500, db.balance(buyer.userId()));
        assertEquals(2, db.entries(buyer.userId()), "the deposit and one payment");
        assertEquals(1, db.payments(first.order()), "the order whose pay had debited first");
        assertEquals(402, refusal.statusCode(), refusal.asString());
        onFirst.forEach(answer -> assertEquals(201, answer.statusCode(), answer.asString()));
        assertEquals(1, onFirst.stream().map(answer -> answer.jsonPath().getLong("paymentId")).distinct().count(), "one payment named");
    }

    /**
     * The same pays the other way round: the second order's pay is held after its debit, and the
     * first order's twins and other keys come while it is: the second order is paid, and every
     * answer about the first that is not "in progress" is the refusal.
     */
    @Test
    void concurrentPaysOnOneOrderAfterAnotherOrderHasDebitedTheAccountAreRefused() throws Exception {
        Buyer buyer = Buyer.withBalance(2000);
        Checkout first = buyer.checkout(1500);
        Checkout second = buyer.checkout(1500);

        List<Response> answers = payWhileOneIsHeldAfterItsDebit(buyer.userId(), second::pay, List.of(
                first::pay, first::pay, first::pay,
                () -> Api.pay(buyer.bearer(), first.order(), Api.newKey()),
                () -> Api.pay(buyer.bearer(), first.order(), Api.newKey())));

        Response paid = answers.get(0);
        List<Response> onFirst = answers.subList(1, 6).stream().filter(answer -> answer.statusCode() != 409).toList();
        assertEquals(1, db.payments(first.order()) + db.payments(second.order()), "one of the two orders was paid");
        assertEquals(500, db.balance(buyer.userId()));
        assertEquals(2, db.entries(buyer.userId()), "the deposit and one payment");
        assertEquals(1, db.payments(second.order()), "the order whose pay had debited first");
        assertEquals(201, paid.statusCode(), paid.asString());
        onFirst.forEach(answer -> assertEquals(402, answer.statusCode(), answer.asString()));
    }

    /**
     * Sends {@code held} alone and stops it after its debit, at its ledger line, on a lock of the
     * test's, then sends {@code others} together. Those on the held pay's order meet its pay lock
     * (409), and one pay of another order on the account waits on the account row the held pay has
     * debited, in its one statement, until the test lets go once it has seen both: the held pay always
     * commits first. Returns the held pay's answer, then the others' in their order.
     */
    private List<Response> payWhileOneIsHeldAfterItsDebit(String userId, Supplier<Response> held, List<Callable<Response>> others)
            throws Exception {
        try (UserLock gate = UserLock.hold(db)) {
            db.update("CREATE TRIGGER test_held_ledger_line AFTER INSERT ON account_entry FOR EACH ROW "
                    + "IF NEW.user_id = '" + userId + "' THEN " + gate.waitStatement() + "; END IF");
            CompletableFuture<Response> heldPay = CompletableFuture.supplyAsync(held, client);
            gate.awaitWaiter(db);
            try (RequestsInFlight<Response> rest = RequestsInFlight.start(others)) {
                db.awaitDebitWaitingFor(userId);
                rest.awaitAnswered(others.size() - 1, "the pays on the held pay's order answered");
                boolean heldThroughout = !heldPay.isDone() && rest.answered() == others.size() - 1;
                gate.release();

                List<Response> answers = new ArrayList<>();
                answers.add(heldPay.get(30, TimeUnit.SECONDS));
                answers.addAll(rest.answers());
                assertTrue(heldThroughout, "set-up: the others were answered, or waited on the account row, while the held pay was in its transaction");
                return answers;
            }
        } finally {
            // After the lock's session has ended: a pay still in the trigger would hold up the DROP.
            db.update("DROP TRIGGER IF EXISTS test_held_ledger_line");
        }
    }
}
