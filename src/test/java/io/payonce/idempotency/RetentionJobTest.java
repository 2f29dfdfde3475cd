package io.payonce.idempotency;

import io.payonce.support.Api;
import io.payonce.support.Database;
import io.payonce.support.Meters;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@QuarkusTest
class RetentionJobTest {

    @Inject
    RetentionJob retention;

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    @Test
    void deletesRecordsOlderThanTheRetentionInBatchesAndKeepsTheRest() {
        String ops = Tokens.ops();
        String user = Tokens.newUserId();
        Api.fundedAccount(user, 0);
        for (int i = 0; i < 7; i++) {
            Api.deposit(ops, user, "old-" + i, 10);
        }
        Api.deposit(ops, user, "recent", 10);
        db.update("UPDATE idempotency_record SET created_at = NOW(6) - INTERVAL 8 DAY WHERE idem_key LIKE 'old-%'");
        double deletedBefore = meters.count("payonce.idempotency.records.deleted");

        int deleted = retention.deleteExpired().await().indefinitely();

        assertTrue(deleted >= 7, "deleted " + deleted);
        assertEquals(0, db.count("SELECT COUNT(*) FROM idempotency_record WHERE idem_key LIKE 'old-%'"));
        assertEquals(1, db.count("SELECT COUNT(*) FROM idempotency_record WHERE idem_key = 'recent'"));
        assertEquals(deleted, meters.count("payonce.idempotency.records.deleted") - deletedBefore);
    }

    @Test
    void anExpiredKeyCannotChargeTwiceForTheSameDeposit() {
        String ops = Tokens.ops();
        String user = Tokens.newUserId();
        Api.fundedAccount(user, 0);
        Api.deposit(ops, user, "expiring-deposit", 100);
        db.update("UPDATE idempotency_record SET created_at = NOW(6) - INTERVAL 8 DAY WHERE idem_key = 'expiring-deposit'");
        retention.deleteExpired().await().indefinitely();

        var late = Api.deposit(ops, user, "expiring-deposit", 100);

        assertEquals(409, late.statusCode(), late.asString());
        assertEquals("ALREADY_APPLIED", late.jsonPath().getString("code"));
        assertEquals(100, db.balance(user), "the ledger's unique reference refused the second credit");
    }
}
