package io.payonce.payment.balance;

import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The two transient database failures besides a lock-wait timeout, each forced for real while a pay
 * transaction is inside its debit: a deadlock (1213) that InnoDB resolves by rolling the pay back,
 * and its connection killed under it. Either way the transaction is run again with the same key and
 * the order is charged once.
 */
@QuarkusTest
@ExtendWith(LedgerInvariants.class)
class DeadlockAndLostConnectionTest {

    private static final String RETRIES = "ft.retry.retries.total";
    private static final String TRANSACTIONS = "io.payonce.db.Transactions.inTransaction";
    /** Rows the other session writes first, so that InnoDB picks the lighter pay transaction as the deadlock's victim. */
    private static final int HEAVIER_BY_ROWS = 50;

    private final Database db = Database.forTests();
    private final ExecutorService client = Executors.newSingleThreadExecutor();

    @Inject
    Meters meters;

    @Test
    void aPayChosenAsADeadlockVictimIsRetriedAndChargesOnce() throws Exception {
        Checkout payer = Buyer.withBalance(5000).checkout(1500);
        double retriesBefore = meters.count(RETRIES, "method", TRANSACTIONS);
        long deadlocksBefore = status("INNODB_DEADLOCKS");

        try (Connection other = db.connect()) {
            other.setAutoCommit(false);
            writeRows(other, HEAVIER_BY_ROWS);
            lockAccountRow(other, payer.userId());
            CompletableFuture<Response> pay = CompletableFuture.supplyAsync(() -> payer.pay(), client);
            db.awaitDebitWaitingFor(payer.userId());
            touchOrderRow(other, payer.order());
            other.rollback();

            Response answer = pay.get(30, TimeUnit.SECONDS);

            System.out.printf("deadlock: answer %d after %.0f retries, deadlocks=%d, debits=%d%n", answer.statusCode(),
                    meters.count(RETRIES, "method", TRANSACTIONS) - retriesBefore, status("INNODB_DEADLOCKS") - deadlocksBefore,
                    db.payments(payer.order()));
            assertEquals(201, answer.statusCode(), answer.asString());
        }
        assertTrue(status("INNODB_DEADLOCKS") > deadlocksBefore, "a deadlock really happened");
        assertTrue(meters.count(RETRIES, "method", TRANSACTIONS) > retriesBefore, "the pay transaction was retried");
        assertEquals(1, db.payments(payer.order()));
        assertEquals(3500, db.balance(payer.userId()));
    }

    @Test
    void aPayWhoseConnectionIsKilledMidTransactionIsRetriedAndChargesOnce() throws Exception {
        Checkout payer = Buyer.withBalance(5000).checkout(1500);
        double retriesBefore = meters.count(RETRIES, "method", TRANSACTIONS);

        try (Connection other = db.connect()) {
            other.setAutoCommit(false);
            lockAccountRow(other, payer.userId());
            CompletableFuture<Response> pay = CompletableFuture.supplyAsync(() -> payer.pay(), client);
            long payConnection = db.awaitDebitWaitingFor(payer.userId());
            db.update("KILL CONNECTION " + payConnection);
            other.rollback();

            Response answer = pay.get(30, TimeUnit.SECONDS);

            System.out.printf("connection killed inside a pay: answer %d after %.0f retries, debits=%d%n", answer.statusCode(),
                    meters.count(RETRIES, "method", TRANSACTIONS) - retriesBefore, db.payments(payer.order()));
            assertEquals(201, answer.statusCode(), answer.asString());
        }
        assertTrue(meters.count(RETRIES, "method", TRANSACTIONS) > retriesBefore, "the pay transaction was retried");
        assertEquals(1, db.payments(payer.order()));
        assertEquals(3500, db.balance(payer.userId()));
    }

    private static void writeRows(Connection connection, int rows) throws SQLException {
        String user = "heavy-" + UUID.randomUUID();
        try (PreparedStatement insert = connection.prepareStatement("INSERT INTO coupon_grant (user_id, activity_id) VALUES (?, ?)")) {
            for (int i = 0; i < rows; i++) {
                insert.setString(1, user);
                insert.setString(2, "a-" + i);
                insert.executeUpdate();
            }
        }
    }

    private static void lockAccountRow(Connection connection, String userId) throws SQLException {
        try (PreparedStatement lock = connection.prepareStatement("SELECT balance FROM account WHERE user_id = ? FOR UPDATE")) {
            lock.setString(1, userId);
            lock.executeQuery().close();
        }
    }

    /** Waits for the order row the pay's status CAS holds: the cycle InnoDB resolves as a deadlock. */
    private static void touchOrderRow(Connection connection, long orderId) throws SQLException {
        try (PreparedStatement touch = connection.prepareStatement("UPDATE orders SET updated_at = updated_at WHERE id = ?")) {
            touch.setLong(1, orderId);
            touch.executeUpdate();
        }
    }

    private long status(String name) {
        return Long.parseLong(db.string("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = ?", name));
    }
}
