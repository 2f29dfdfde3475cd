package io.payonce.payment;

import io.payonce.support.Api;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Forces real lock-wait timeouts (1205): a second connection holds the payer's account row while
 * the pay transaction needs it. The test profile's lock wait is one second.
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

    @Test
    void aLockWaitTimeoutIsRetriedWithTheSameKeyAndChargesOnce() throws Exception {
        String user = Tokens.newUserId();
        Api.fundedAccount(user, 5000);
        String bearer = Tokens.user(user);
        long order = Api.newOrder(bearer, 1500);
        double retriesBefore = meters.count(RETRIES, "method", TRANSACTIONS);

        CompletableFuture<Void> holder = holdAccountRow(user, Duration.ofMillis(1600));
        Response response = Api.pay(bearer, order, Api.newKey());
        holder.get(30, TimeUnit.SECONDS);

        double retries = meters.count(RETRIES, "method", TRANSACTIONS) - retriesBefore;
        System.out.printf("lock held 1.6 s against a 1 s lock wait: answer %d after %.0f retries, debits=%d%n",
                response.statusCode(), retries, db.payments(order));
        assertEquals(201, response.statusCode(), response.asString());
        assertTrue(retries >= 1, "the transaction was retried");
        assertEquals(3500, db.balance(user));
        assertEquals(1, db.payments(order));
    }

    @Test
    void whenRetriesRunOutTheAnswerIs503AndTheSameKeyPaysLater() throws Exception {
        String user = Tokens.newUserId();
        Api.fundedAccount(user, 5000);
        String bearer = Tokens.user(user);
        long order = Api.newOrder(bearer, 1500);
        String key = Api.newKey();

        CompletableFuture<Void> holder = holdAccountRow(user, Duration.ofSeconds(7));
        Response exhausted = Api.pay(bearer, order, key);
        holder.get(30, TimeUnit.SECONDS);
        Response later = Api.pay(bearer, order, key);

        assertEquals(503, exhausted.statusCode(), exhausted.asString());
        assertEquals("DEPENDENCY_UNAVAILABLE", exhausted.jsonPath().getString("code"));
        assertEquals("1", exhausted.header("Retry-After"));
        assertEquals(201, later.statusCode(), "the failed attempts left the key unclaimed: " + later.asString());
        assertEquals(null, later.header("Idempotent-Replayed"));
        assertEquals(3500, db.balance(user));
        assertEquals(1, db.payments(order));
    }

    @Test
    void sessionsRunReadCommittedWithTheConfiguredLockWait() {
        var row = pool.query("SELECT @@SESSION.tx_isolation, @@SESSION.innodb_lock_wait_timeout").execute()
                .await().atMost(Duration.ofSeconds(10)).iterator().next();

        assertEquals("READ-COMMITTED", row.getString(0));
        assertEquals(1, row.getInteger(1));
    }

    /** Locks the account row in a transaction of its own and returns once it holds the lock. */
    private CompletableFuture<Void> holdAccountRow(String user, Duration howLong) throws InterruptedException {
        CountDownLatch locked = new CountDownLatch(1);
        CompletableFuture<Void> done = pool.withTransaction(connection -> connection
                        .preparedQuery("SELECT balance FROM account WHERE user_id = ? FOR UPDATE").execute(Tuple.of(user))
                        .invoke(locked::countDown)
                        .onItem().call(() -> Uni.createFrom().voidItem().onItem().delayIt().by(howLong))
                        .replaceWithVoid())
                .subscribeAsCompletionStage();
        assertTrue(locked.await(10, TimeUnit.SECONDS), "the row lock was taken");
        return done;
    }
}
