package io.payonce.payment.balance;

import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.payonce.support.RowHolder;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
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
 * Forces real lock-wait timeouts (1205): a session outside payonce holds the payer's account row
 * while the pay transaction needs it. On the test profile, not {@code BoundsOutlastHolds}: these tests
 * are about its one-second lock wait and the three retries {@link io.payonce.db.Transactions} makes
 * after it, four attempts in all (about 4 s) before the pay is answered 503.
 */
@QuarkusTest
@ExtendWith(LedgerInvariants.class)
class TransientFailureRetryTest {

    private static final String RETRIES = "ft.retry.retries.total";
    private static final String TRANSACTIONS = "io.payonce.db.Transactions.inTransaction";
    /** The InnoDB transactions whose debit waits for a user's account row, as in {@link Database#awaitDebitWaitingFor}. */
    private static final String DEBITS_WAITING = """
            SELECT waiting.trx_id
            FROM information_schema.INNODB_LOCK_WAITS wait
            JOIN information_schema.INNODB_LOCKS requested ON requested.lock_id = wait.requested_lock_id
            JOIN information_schema.INNODB_TRX waiting ON waiting.trx_id = wait.requesting_trx_id
            WHERE requested.lock_table = CONCAT('`', DATABASE(), '`.`account`') AND requested.lock_data = QUOTE(?)
              AND waiting.trx_query LIKE 'UPDATE account SET balance = balance - %'""";

    @Inject
    Pool pool;

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    private final ExecutorService client = Executors.newSingleThreadExecutor();

    @AfterEach
    void stopTheClient() {
        client.shutdownNow();
    }

    /**
     * The row is let go once this pay's transaction is seen begun again: a debit of its payer, whom no
     * other request touches, waiting in another InnoDB transaction than the first. The app-wide retry
     * counter alone would be moved by any transaction's retry. The retry's debit begins one lock wait
     * (1 s) after the first's, plus Transactions' 30 +/- 20 ms pause and the three statements before it;
     * the pay gives up when its fourth attempt's wait runs out, about 4 s after its first began. Looked
     * for 2.5 s, the retry is seen and the row let go with more than an attempt to spare.
     */
    @Test
    void aLockWaitTimeoutIsRetriedWithTheSameKeyAndChargesOnce() throws Exception {
        Buyer buyer = Buyer.withBalance(5000);
        long order = buyer.newOrder(1500);
        double retriesBefore = meters.count(RETRIES, "method", TRANSACTIONS);

        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> holder = RowHolder.holdAccountRowUntil(db, buyer.userId(), release);
        CompletableFuture<Response> pay;
        String firstAttempt;
        List<String> waitingAtRelease;
        try {
            pay = CompletableFuture.supplyAsync(() -> Api.pay(buyer.bearer(), order, Api.newKey()), client);
            firstAttempt = Await.until(() -> debitsWaitingFor(buyer.userId()), waiting -> !waiting.isEmpty(), Duration.ofSeconds(6),
                    "the pay's debit waiting for the held row").get(0);
            // A pay answered without a retry ends the wait too, and the checks below say how.
            waitingAtRelease = Await.until(() -> debitsWaitingFor(buyer.userId()),
                    waiting -> waiting.stream().anyMatch(trx -> !trx.equals(firstAttempt)) || pay.isDone(), Duration.ofMillis(2500),
                    "the pay's transaction begun again after its debit's lock wait timed out");
        } finally {
            release.complete(null); // when the set-up failed too, not after the holder's 30 s
        }
        holder.get(30, TimeUnit.SECONDS);
        Response response = pay.get(30, TimeUnit.SECONDS);

        double retries = meters.count(RETRIES, "method", TRANSACTIONS) - retriesBefore;
        System.out.printf("lock held until the first retry: answer %d after %.0f retries, debits=%d%n",
                response.statusCode(), retries, db.payments(order));
        assertTrue(waitingAtRelease.stream().anyMatch(trx -> !trx.equals(firstAttempt)),
                "set-up: the pay's debit waited again in a new transaction (" + waitingAtRelease + ") after its first (" + firstAttempt + ")");
        assertEquals(201, response.statusCode(), response.asString());
        assertTrue(retries >= 1, "set-up: the transaction was retried, as Transactions counts it");
        assertEquals(3500, db.balance(buyer.userId()));
        assertEquals(1, db.payments(order));
    }

    @Test
    void whenRetriesRunOutTheAnswerIs503AndTheSameKeyPaysLater() throws Exception {
        Buyer buyer = Buyer.withBalance(5000);
        long order = buyer.newOrder(1500);
        String key = Api.newKey();

        // Held until the answer comes back: every attempt's lock wait times out on it, however long each takes.
        // Four attempts take about 4 s, well inside the holder's 30 s.
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> holder = RowHolder.holdAccountRowUntil(db, buyer.userId(), release);
        Response exhausted;
        try {
            exhausted = Api.pay(buyer.bearer(), order, key);
        } finally {
            release.complete(null); // when the pay failed too, not after the holder's 30 s
        }
        holder.get(30, TimeUnit.SECONDS);
        Response later = Api.pay(buyer.bearer(), order, key);

        assertEquals(503, exhausted.statusCode(), exhausted.asString());
        assertEquals("DEPENDENCY_UNAVAILABLE", exhausted.jsonPath().getString("code"));
        assertEquals("1", exhausted.header("Retry-After"));
        assertEquals(201, later.statusCode(), "the failed attempts left the key unclaimed: " + later.asString());
        assertEquals(null, later.header("Idempotent-Replayed"));
        assertEquals(3500, db.balance(buyer.userId()));
        assertEquals(1, db.payments(order));
    }

    /** The InnoDB transactions whose debit waits now for the user's account row. */
    private List<String> debitsWaitingFor(String userId) {
        return db.strings(DEBITS_WAITING, userId);
    }

    @Test
    void sessionsRunReadCommittedWithTheConfiguredLockWaitTimeBoundsAndSyncWait() {
        var row = pool.query("""
                        SELECT @@SESSION.tx_isolation, @@SESSION.innodb_lock_wait_timeout,
                               @@SESSION.max_statement_time, @@SESSION.idle_transaction_timeout,
                               @@SESSION.wsrep_sync_wait""").execute()
                .await().atMost(Duration.ofSeconds(10)).iterator().next();

        assertEquals("READ-COMMITTED", row.getString(0));
        assertEquals(1, row.getInteger(1));
        assertEquals(2, row.getDouble(2));
        assertEquals(2, row.getInteger(3));
        assertEquals(1, row.getInteger(4), "reads wait for a Galera cluster's earlier commits; a no-op on one server");
    }
}
