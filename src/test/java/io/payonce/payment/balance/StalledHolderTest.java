package io.payonce.payment.balance;

import io.payonce.idempotency.Fingerprint;
import io.payonce.support.Api;
import io.payonce.support.Buyer;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Replays;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An instance paused inside a pay transaction (SIGSTOP, a frozen VM, a half-open connection) goes
 * silent on a connection that holds its claim and its order row. To the server that is a session
 * idle inside a transaction; here it is one of payonce's own pooled connections, with payonce's
 * session settings, left exactly there after the claim and the status CAS. The server must cut it
 * off within the configured bound (2 s in tests), so that the same key and a new key both settle,
 * with one debit.
 */
@QuarkusTest
@ExtendWith(LedgerInvariants.class)
class StalledHolderTest {

    private static final Duration SETTLE_WITHIN = Duration.ofSeconds(6);

    private final Database db = Database.forTests();

    @Inject
    Pool pool;

    @Test
    void aHolderPausedInsideAPayTransactionIsCutOffAndBothKeysSettle() throws Exception {
        Buyer buyer = Buyer.withBalance(5000);
        long order = buyer.newOrder(1200);
        String key = Api.newKey();
        SqlConnection paused = pauseInsidePayTransaction(buyer.userId(), order, key);
        long start = System.nanoTime();

        List<Response> answers = Concurrently.run(List.of(
                () -> Api.payUntilSettled(buyer.bearer(), order, key),            // the gateway retrying the paused request
                () -> Api.payUntilSettled(buyer.bearer(), order, Api.newKey()))); // the user paying again with a new key

        Duration settled = Duration.ofNanos(System.nanoTime() - start);
        System.out.printf("holder paused inside a pay: both keys settled after %d ms (answers %d, %d), debits=%d%n",
                settled.toMillis(), answers.get(0).statusCode(), answers.get(1).statusCode(), db.payments(order));
        assertTrue(settled.compareTo(SETTLE_WITHIN) < 0, "settled within the bound: " + settled.toMillis() + " ms");
        answers.forEach(answer -> assertEquals(201, answer.statusCode(), answer.asString()));
        assertEquals(1, answers.stream().filter(answer -> !Replays.isRepeat(answer)).count(),
                "one key paid, the other was told it repeats that payment: " + answers.get(0).asString() + " / " + answers.get(1).asString());
        assertEquals(1, db.payments(order));
        assertEquals(3800, db.balance(buyer.userId()));
        assertThrows(Exception.class, () -> paused.query("SELECT 1").execute().await().atMost(Duration.ofSeconds(5)),
                "the server closed the paused holder's connection");
        paused.close().await().atMost(Duration.ofSeconds(5));
    }

    /** What a pay transaction has done when its instance stops right after the status CAS. */
    private SqlConnection pauseInsidePayTransaction(String user, long order, String key) {
        SqlConnection connection = pool.getConnection().await().atMost(Duration.ofSeconds(10));
        connection.begin().await().atMost(Duration.ofSeconds(10));
        String fingerprint = Fingerprint.of("pay", "order:" + order, "{}").sha256();
        connection.preparedQuery("""
                        INSERT INTO idempotency_record (scope, idem_key, operation, target, fingerprint, request_body, status)
                        VALUES (?, ?, 'pay', ?, ?, '{}', 'PROCESSING')""")
                .execute(Tuple.of(user, key, "order:" + order, fingerprint)).await().atMost(Duration.ofSeconds(10));
        int moved = connection.preparedQuery("UPDATE orders SET status = 'PAID' WHERE id = ? AND status = 'UNPAID'")
                .execute(Tuple.of(order)).await().atMost(Duration.ofSeconds(10)).rowCount();
        assertEquals(1, moved);
        return connection;
    }
}
