package io.payonce.idempotency;

import io.payonce.support.Api;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.payonce.support.Replays;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@QuarkusTest
@ExtendWith(LedgerInvariants.class)
class RetentionJobTest {

    @Inject
    RetentionJob retention;

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    /** The test profile's batch is 2 records, so seven expired records take at least four statements. */
    @Test
    void deletesRecordsOlderThanTheRetentionInBatchesAndKeepsTheRest() {
        String ops = Tokens.ops();
        String user = Buyer.withBalance(0).userId();
        String run = UUID.randomUUID().toString();
        for (int i = 0; i < 7; i++) {
            assertEquals(201, Api.deposit(ops, user, "old-" + i + "-" + run, 10).statusCode());
        }
        assertEquals(201, Api.deposit(ops, user, "recent-" + run, 10).statusCode());
        db.update("UPDATE idempotency_record SET created_at = NOW(6) - INTERVAL 8 DAY WHERE idem_key LIKE ?", "old-%-" + run);
        double deletedBefore = meters.count("payonce.idempotency.records.deleted");
        long deleteStatementsBefore = deleteStatements();

        int deleted = retention.deleteExpired().await().indefinitely();

        assertEquals(7, deleted);
        assertTrue(deleteStatements() - deleteStatementsBefore >= 4, "one statement per batch of 2");
        assertEquals(0, db.count("SELECT COUNT(*) FROM idempotency_record WHERE idem_key LIKE ?", "old-%-" + run));
        assertEquals(1, db.count("SELECT COUNT(*) FROM idempotency_record WHERE idem_key = ?", "recent-" + run));
        assertEquals(deleted, meters.count("payonce.idempotency.records.deleted") - deletedBefore);
    }

    @Test
    void anExpiredKeyCannotChargeTwiceForTheSameDeposit() {
        String ops = Tokens.ops();
        String user = Buyer.withBalance(0).userId();
        String key = "expiring-deposit-" + UUID.randomUUID();
        assertEquals(201, Api.deposit(ops, user, key, 100).statusCode());
        expire(key);

        var late = Api.deposit(ops, user, key, 100);

        assertEquals(409, late.statusCode(), late.asString());
        assertEquals("ALREADY_APPLIED", late.jsonPath().getString("code"));
        assertEquals(100, db.balance(user), "the ledger's unique reference refused the second credit");
    }

    @Test
    void anExpiredKeyCannotPayAnOrderTwice() {
        Buyer buyer = Buyer.withBalance(1000);
        long order = buyer.newOrder(400);
        String key = "expiring-pay-" + UUID.randomUUID();
        var first = Api.pay(buyer.bearer(), order, key);
        assertEquals(201, first.statusCode(), first.asString());
        expire(key);

        var late = Api.pay(buyer.bearer(), order, key);

        Replays.assertReplayOf(first, late);
        assertEquals(600, db.balance(buyer.userId()), "the order's status and UNIQUE(order_id) refused a second charge");
        assertEquals(1, db.payments(order));
    }

    private void expire(String key) {
        assertEquals(1, db.update("UPDATE idempotency_record SET created_at = NOW(6) - INTERVAL 8 DAY WHERE idem_key = ?", key));
        retention.deleteExpired().await().indefinitely();
        assertEquals(0, db.count("SELECT COUNT(*) FROM idempotency_record WHERE idem_key = ?", key));
    }

    private long deleteStatements() {
        return Long.parseLong(db.string("SELECT VARIABLE_VALUE FROM information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'COM_DELETE'"));
    }
}
