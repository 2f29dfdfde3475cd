package io.payonce.payment.balance;

import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Buyer;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.payonce.support.UserLock;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
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
 * COMMIT whose reply is lost PipelinedRoundTripsTest's. A body that meets a row or a pay the test
 * holds is PipelinedPayRacesTest's, on bounds that outlast the hold; the test here stays on the test
 * profile, because it needs the pay's 1 s lock wait to run out while the test holds the lock.
 */
@QuarkusTest
@ExtendWith(LedgerInvariants.class)
class PipelinedPayTest {

    static final String PIPELINED = "payonce.pipelined.transactions";

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    /**
     * An operator's INSERT ... SELECT into account_entry holds the table's AUTO-INC lock to the end of
     * its statement, longer than the session's lock wait: a pay's ledger line waits for it, fails on
     * it ("Failed to read auto-increment value", 1467, a lock wait by another number) and is run again,
     * as after any lock wait, instead of answering 500. The operator's statement is held by the test's
     * trigger on a lock of the test's own, not for a fixed time, and let go only once the pay's
     * transaction has been run again: once a second transaction of a ledger line has waited behind the
     * operator's session. The app-wide retry counter would not tell: any transaction's retry moves it.
     */
    @Test
    void aLedgerLineThatOutwaitsABulkInsertsLockIsRunAgainNotAnsweredWith500() throws Exception {
        Checkout bulk = Buyer.withBalance(100).checkout(50);
        Checkout payer = Buyer.withBalance(5000).checkout(1500);
        String operatorLine = "bulk-" + Api.newKey();
        ExecutorService clients = Executors.newFixedThreadPool(2);
        try (UserLock gate = UserLock.hold(db)) {
            // The operator's session has no statement bound: it waits in the trigger until the test lets go.
            db.update("CREATE TRIGGER test_held_bulk_insert AFTER INSERT ON account_entry FOR EACH ROW "
                    + "IF NEW.user_id = '" + bulk.userId() + "' THEN " + gate.waitStatement() + "; END IF");
            CompletableFuture<Integer> operator = CompletableFuture.supplyAsync(() -> db.update("""
                    INSERT INTO account_entry (user_id, delta, balance_after, ref_type, ref_id)
                    SELECT user_id, 1, balance, 'DEPOSIT', ? FROM account WHERE user_id = ?""", operatorLine, bulk.userId()), clients);
            long operatorSession = gate.awaitWaiter(db);
            CompletableFuture<Response> pay = CompletableFuture.supplyAsync(payer::pay, clients);
            // The pay is the one request in flight: a ledger line waiting behind the operator is its own.
            Set<String> attempts = new HashSet<>();
            Await.until(() -> {
                attempts.addAll(ledgerLinesWaitingBehind(operatorSession));
                return attempts.size() >= 2 || pay.isDone();
            }, Duration.ofSeconds(10), "the pay's ledger line waiting behind the operator's insert in a second transaction");
            boolean retriedWhileHeld = attempts.size() >= 2 && !pay.isDone();
            gate.release();

            Response answer = pay.get(30, TimeUnit.SECONDS);
            assertTrue(retriedWhileHeld, "set-up: the pay's transaction was run again while the operator's insert held the lock");
            assertEquals(201, answer.statusCode(), answer.asString());
            assertEquals(1, operator.get(30, TimeUnit.SECONDS));
            assertPaidOnce(db, payer, 3500);
        } finally {
            clients.shutdownNow();
            // After the lock's session has ended: an insert still in the trigger would hold up the DROP.
            db.update("DROP TRIGGER IF EXISTS test_held_bulk_insert");
            db.update("DELETE FROM account_entry WHERE ref_type = 'DEPOSIT' AND ref_id = ?", operatorLine);
        }
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
        assertEquals(0, paymentEvents(db, payer));
        assertEquals(402, payer.pay().statusCode(), "the refusal was stored and replays");
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
        assertPaidOnce(db, payer, 3500);
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

    /**
     * The InnoDB transactions of ledger lines that wait for a lock the session {@code holder} holds and
     * have run for 300 ms at least: a pipelined body, which waits for no lock, fails at once and is
     * never one of them.
     */
    private List<String> ledgerLinesWaitingBehind(long holder) {
        return db.strings("""
                SELECT DISTINCT waiting.trx_id
                FROM information_schema.INNODB_LOCK_WAITS wait
                JOIN information_schema.INNODB_TRX waiting ON waiting.trx_id = wait.requesting_trx_id
                JOIN information_schema.INNODB_TRX holding ON holding.trx_id = wait.blocking_trx_id
                JOIN information_schema.PROCESSLIST waiter ON waiter.ID = waiting.trx_mysql_thread_id
                WHERE holding.trx_mysql_thread_id = ? AND waiting.trx_query LIKE 'INSERT INTO account_entry%'
                  AND waiter.TIME_MS >= 300""", holder);
    }

    /** The order paid once, with one ledger line, one event and the key's answer, and the balance left. */
    static void assertPaidOnce(Database db, Checkout payer, long balance) {
        assertEquals("PAID", db.orderStatus(payer.order()));
        assertEquals(1, db.payments(payer.order()));
        assertEquals(balance, db.balance(payer.userId()));
        assertEquals(2, db.entries(payer.userId()), "the deposit's line and the payment's");
        assertEquals(1, paymentEvents(db, payer));
        assertEquals("201", db.string("SELECT http_status FROM idempotency_record WHERE scope = ? AND idem_key = ?",
                payer.userId(), payer.key()));
    }

    static long paymentEvents(Database db, Checkout payer) {
        return db.count("SELECT COUNT(*) FROM outbox_event WHERE user_id = ? AND event_type = 'payment.succeeded'", payer.userId());
    }

    private long status(String name) {
        return Long.parseLong(db.string("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = ?", name));
    }
}
