package io.payonce.payment.balance;

import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Buyer;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.payonce.support.RowHolder;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The pay's body sent pipelined (PipelinedBalancePay under PipelinedTransactions), against the real
 * MariaDB: whatever stops it in the middle, a busy row, too little money, an order paid already,
 * nothing of it commits, and the sequential transaction then answers the request as it would have
 * without pipelining. A deadlock in the middle of a body is PipelinedTransactionsTest's, and a
 * COMMIT whose reply is lost PipelinedRoundTripsTest's.
 */
@QuarkusTest
@ExtendWith(LedgerInvariants.class)
class PipelinedPayTest {

    private static final String PIPELINED = "payonce.pipelined.transactions";

    private final Database db = Database.forTests();
    private final ExecutorService client = Executors.newSingleThreadExecutor();

    @Inject
    Meters meters;

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
        CompletableFuture<Response> pay = CompletableFuture.supplyAsync(payer::pay, client);
        Await.until(() -> meters.count(PIPELINED, "outcome", "failed"), failed -> failed > failedBefore, Duration.ofSeconds(10),
                "the pipelined body failing at the held row");
        release.complete(null);
        held.get(10, TimeUnit.SECONDS);

        Response answer = pay.get(30, TimeUnit.SECONDS);
        assertEquals(201, answer.statusCode(), answer.asString());
        assertEquals(failedBefore + 1, meters.count(PIPELINED, "outcome", "failed"), "the pipelined body met the held row");
        assertPaidOnce(payer, 3500);
    }

    /**
     * One account's ledger line written slowly (a trigger of the test's sleeps after the row is
     * written, to the end of its statement) does not fail another account's pipelined pay: the ledger
     * line is a single-row insert, which takes account_entry's next id under a brief mutex. Written as
     * INSERT ... SELECT, a bulk insert to InnoDB, it held the table's AUTO-INC lock to the end of its
     * statement, and every other pay's pipelined body, which waits for no lock, failed on it at once
     * ("Failed to read auto-increment value"), to be sent again one statement at a time.
     */
    @Test
    void aSlowLedgerLineOfOneAccountDoesNotFailAnotherAccountsPipelinedPay() throws Exception {
        Checkout slow = Buyer.withBalance(5000).checkout(1500);
        Checkout other = Buyer.withBalance(5000).checkout(1500);
        slowLedgerLinesOf(slow.userId());
        try {
            double failedBefore = meters.count(PIPELINED, "outcome", "failed");
            double committedBefore = meters.count(PIPELINED, "outcome", "committed");
            CompletableFuture<Response> slowPay = CompletableFuture.supplyAsync(slow::pay, client);
            Await.until(() -> slowLedgerLines() == 1, Duration.ofSeconds(6), "the slow ledger line being written");

            Response answer = other.pay();

            assertEquals(201, answer.statusCode(), answer.asString());
            assertEquals(1, slowLedgerLines(), "the slow ledger line was still being written");
            assertEquals(failedBefore, meters.count(PIPELINED, "outcome", "failed"), "no pipelined body failed on the slow line");
            Response slowAnswer = slowPay.get(30, TimeUnit.SECONDS);
            assertEquals(201, slowAnswer.statusCode(), slowAnswer.asString());
            assertEquals(committedBefore + 2, meters.count(PIPELINED, "outcome", "committed"), "both pays committed pipelined");
            assertPaidOnce(slow, 3500);
            assertPaidOnce(other, 3500);
        } finally {
            db.update("DROP TRIGGER IF EXISTS test_slow_ledger_line");
        }
    }

    /**
     * An operator's INSERT ... SELECT into account_entry holds the table's AUTO-INC lock to the end of
     * its statement, longer than the session's lock wait: a pay's ledger line waits for it, fails on
     * it ("Failed to read auto-increment value", 1467, a lock wait by another number) and is run again,
     * as after any lock wait, instead of answering 500.
     */
    @Test
    void aLedgerLineThatOutwaitsABulkInsertsLockIsRunAgainNotAnsweredWith500() throws Exception {
        Checkout bulk = Buyer.withBalance(100).checkout(50);
        Checkout payer = Buyer.withBalance(5000).checkout(1500);
        String operatorLine = "bulk-" + Api.newKey();
        slowLedgerLinesOf(bulk.userId());
        try {
            CompletableFuture<Integer> operator = CompletableFuture.supplyAsync(() -> db.update("""
                    INSERT INTO account_entry (user_id, delta, balance_after, ref_type, ref_id)
                    SELECT user_id, 1, balance, 'DEPOSIT', ? FROM account WHERE user_id = ?""", operatorLine, bulk.userId()), client);
            Await.until(() -> slowLedgerLines() == 1, Duration.ofSeconds(6), "the operator's insert being written");

            Response answer = payer.pay();

            assertEquals(201, answer.statusCode(), answer.asString());
            assertEquals(1, operator.get(30, TimeUnit.SECONDS));
            assertPaidOnce(payer, 3500);
        } finally {
            db.update("DROP TRIGGER IF EXISTS test_slow_ledger_line");
            db.update("DELETE FROM account_entry WHERE ref_type = 'DEPOSIT' AND ref_id = ?", operatorLine);
        }
    }

    /** Every ledger line of the user sleeps 1.5 s after it is written, to the end of its statement, until the trigger is dropped. */
    private void slowLedgerLinesOf(String userId) {
        db.update("CREATE TRIGGER test_slow_ledger_line AFTER INSERT ON account_entry FOR EACH ROW "
                + "IF NEW.user_id = '" + userId + "' THEN DO SLEEP(1.5); END IF");
    }

    /** Sessions in the test's trigger, which MariaDB shows running its statement. */
    private long slowLedgerLines() {
        return db.count("SELECT COUNT(*) FROM information_schema.processlist WHERE info LIKE 'DO SLEEP(1.5)%'");
    }

    /** The debit changes no row: the body is rolled back, and the sequential transaction records the 402. */
    @Test
    void tooLittleMoneyFoundByThePipelinedBodyCommitsNothingAndIsRecorded() {
        Checkout payer = Buyer.withBalance(1000).checkout(1500);
        double declinedBefore = meters.count(PIPELINED, "outcome", "declined");

        Response answer = payer.pay();

        assertEquals(declinedBefore + 1, meters.count(PIPELINED, "outcome", "declined"), "the pipelined body found too little money");
        assertEquals(402, answer.statusCode(), answer.asString());
        assertEquals("UNPAID", db.orderStatus(payer.order()));
        assertEquals(0, db.payments(payer.order()));
        assertEquals(1000, db.balance(payer.userId()));
        assertEquals(1, db.entries(payer.userId()), "the deposit's line alone");
        assertEquals(0, paymentEvents(payer));
        assertEquals(402, payer.pay().statusCode(), "the refusal was stored and replays");
    }

    /**
     * Twins of one key, other keys on the same order, and a second order on the same account that the
     * balance cannot also cover, all at once: the first order is paid once and every answer about it
     * names that payment; the second is refused.
     */
    @Test
    void concurrentPaysOnOneOrderAndOneAccountPayOnce() throws Exception {
        Buyer buyer = Buyer.withBalance(2000);
        Checkout first = buyer.checkout(1500);
        Checkout second = buyer.checkout(1500);
        List<Response> answers = Concurrently.run(List.of(
                first::pay, first::pay, first::pay,
                () -> Api.pay(buyer.bearer(), first.order(), Api.newKey()),
                () -> Api.pay(buyer.bearer(), first.order(), Api.newKey()),
                second::pay));

        Response refusal = answers.get(5);
        List<Response> onFirst = answers.subList(0, 5).stream().filter(answer -> answer.statusCode() != 409).toList();
        long paid = db.payments(first.order()) + db.payments(second.order());
        assertEquals(1, paid, "one of the two orders was paid");
        assertEquals(500, db.balance(buyer.userId()));
        assertEquals(2, db.entries(buyer.userId()), "the deposit and one payment");
        if (db.payments(first.order()) == 1) {
            assertEquals(402, refusal.statusCode(), refusal.asString());
            onFirst.forEach(answer -> assertEquals(201, answer.statusCode(), answer.asString()));
            assertEquals(1, onFirst.stream().map(answer -> answer.jsonPath().getLong("paymentId")).distinct().count(), "one payment named");
        } else {
            assertEquals(201, refusal.statusCode(), refusal.asString());
            onFirst.forEach(answer -> assertEquals(402, answer.statusCode(), answer.asString()));
        }
    }

    /**
     * Another key on a paid order: its pipelined body claims the new key, moves no order row, and its
     * payment meets the order's live payment (1062 on pay_record), so it is rolled back (declined: a
     * repeat, not a fault), and the sequential transaction answers with the payment.
     */
    @Test
    void anotherKeyOnAPaidOrderIsDeclinedByThePipelinedBodyAtItsPaymentAndAnsweredWithThePayment() {
        Checkout payer = Buyer.withBalance(5000).checkout(1500);
        Response first = payer.pay();
        double declinedBefore = meters.count(PIPELINED, "outcome", "declined");

        Response other = Api.pay(payer.bearer(), payer.order(), Api.newKey());

        assertEquals(201, other.statusCode(), other.asString());
        assertEquals(first.jsonPath().getLong("paymentId"), other.jsonPath().getLong("paymentId"));
        assertEquals(declinedBefore + 1, meters.count(PIPELINED, "outcome", "declined"), "the pipelined body's payment refused, a repeat");
        assertPaidOnce(payer, 3500);
    }

    /**
     * Statements MariaDB executed per first pay, by its Questions counter (a body rolled back and sent
     * again one statement at a time would make it 20). The counter is server-wide: the run's jobs and
     * work an earlier test left can only add to it, so the fewest of three windows is the pays' own:
     * the joined read, then the body, with ROLLBACK where BEGIN was. As many as before; what changed
     * is how often the instance waits for the database: 4 times (the read; claim, compare-and-set,
     * payment and debit sent together; ledger line, event and answer together; COMMIT) where the
     * sequential body waited 10 times. With the Redis lock and its release, a pay is 6 round trips
     * instead of 12.
     */
    @Test
    void aFirstPayTakesTheStatementsItTookBefore() {
        Buyer buyer = Buyer.withBalance(100_000);
        double committedBefore = meters.count(PIPELINED, "outcome", "committed");

        double perPay = Double.MAX_VALUE;
        for (int window = 0; window < 3; window++) {
            perPay = Math.min(perPay, statementsPerFirstPay(buyer, 20));
        }

        System.out.printf("statements per first pay, fewest of three windows: %.1f%n", perPay);
        assertTrue(perPay >= 10 && perPay < 12, "statements per first pay: " + perPay);
        assertEquals(committedBefore + 60, meters.count(PIPELINED, "outcome", "committed"), "every one committed pipelined");
    }

    private double statementsPerFirstPay(Buyer buyer, int pays) {
        List<Checkout> checkouts = java.util.stream.IntStream.range(0, pays).mapToObj(i -> buyer.checkout(100)).toList();
        long before = status("Questions");
        checkouts.forEach(checkout -> assertEquals(201, checkout.pay().statusCode()));
        return (status("Questions") - before - 1) / (double) pays;
    }

    private void assertPaidOnce(Checkout payer, long balance) {
        assertEquals("PAID", db.orderStatus(payer.order()));
        assertEquals(1, db.payments(payer.order()));
        assertEquals(balance, db.balance(payer.userId()));
        assertEquals(2, db.entries(payer.userId()), "the deposit's line and the payment's");
        assertEquals(1, paymentEvents(payer));
        assertEquals("201", db.string("SELECT http_status FROM idempotency_record WHERE scope = ? AND idem_key = ?",
                payer.userId(), payer.key()));
    }

    private long paymentEvents(Checkout payer) {
        return db.count("SELECT COUNT(*) FROM outbox_event WHERE user_id = ? AND event_type = 'payment.succeeded'", payer.userId());
    }

    private long status(String name) {
        return Long.parseLong(db.string("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = ?", name));
    }
}
