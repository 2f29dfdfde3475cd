package io.payonce.payment.balance;

import io.payonce.support.Api;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.payonce.support.RowHolder;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Forces real lock-wait timeouts (1205): a session outside payonce holds the payer's account row
 * while the pay transaction needs it. The test profile's lock wait is one second.
 */
@QuarkusTest
@ExtendWith(LedgerInvariants.class)
class TransientFailureRetryTest {

    private static final String RETRIES = "ft.retry.retries.total";
    private static final String TRANSACTIONS = "io.payonce.db.Transactions.inTransaction";

    @Inject
    Pool pool;

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    /** The test profile's lock wait; every hold below is derived from it. */
    @ConfigProperty(name = "payonce.database.lock-wait-timeout-seconds")
    int lockWaitSeconds;

    /** The retries Transactions makes before it answers 503. */
    private static final int MAX_RETRIES = 3;

    @Test
    void aLockWaitTimeoutIsRetriedWithTheSameKeyAndChargesOnce() throws Exception {
        Buyer buyer = Buyer.withBalance(5000);
        long order = buyer.newOrder(1500);
        double retriesBefore = meters.count(RETRIES, "method", TRANSACTIONS);

        CompletableFuture<Void> holder = RowHolder.holdAccountRow(buyer.userId(), lockWaitSeconds * 1600L);
        Response response = Api.pay(buyer.bearer(), order, Api.newKey());
        holder.get(30, TimeUnit.SECONDS);

        double retries = meters.count(RETRIES, "method", TRANSACTIONS) - retriesBefore;
        System.out.printf("lock held 1.6 lock waits: answer %d after %.0f retries, debits=%d%n",
                response.statusCode(), retries, db.payments(order));
        assertEquals(201, response.statusCode(), response.asString());
        assertTrue(retries >= 1, "the transaction was retried");
        assertEquals(3500, db.balance(buyer.userId()));
        assertEquals(1, db.payments(order));
    }

    @Test
    void whenRetriesRunOutTheAnswerIs503AndTheSameKeyPaysLater() throws Exception {
        Buyer buyer = Buyer.withBalance(5000);
        long order = buyer.newOrder(1500);
        String key = Api.newKey();

        CompletableFuture<Void> holder = RowHolder.holdAccountRow(buyer.userId(), (MAX_RETRIES + 1) * lockWaitSeconds * 1000L + 3000);
        Response exhausted = Api.pay(buyer.bearer(), order, key);
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
