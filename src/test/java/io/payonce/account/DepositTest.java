package io.payonce.account;

import io.payonce.support.Api;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.LockWaits;
import io.payonce.support.RequestsInFlight;
import io.payonce.support.RowHolder;
import io.payonce.support.Tokens;
import io.payonce.support.UserLock;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The races below hold a claim or an account row until the racers wait on it, and none of them gives up first. */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@ExtendWith(LedgerInvariants.class)
class DepositTest {

    private final Database db = Database.forTests();

    private final String ops = Tokens.ops();

    /**
     * The deposit that claims the key first stops at its ledger line, at a trigger of the test's, its claim
     * still open, until a twin's claim waits on it: the twins meet the first in its transaction every time.
     * The gate stays shut until the test lets go, and a twin's claim waits for the first's commit.
     */
    @Test
    void aDepositRetriedWithItsKeyCreditsOnce() throws Exception {
        String user = Buyer.withBalance(0).userId();
        String key = Api.newKey();

        List<Response> answers;
        long twinsWaiting;
        int answeredMeanwhile;
        try (UserLock gate = UserLock.hold(db)) {
            db.update("CREATE TRIGGER test_ledger_line_waits AFTER INSERT ON account_entry FOR EACH ROW IF NEW.user_id = '" + user
                    + "' THEN " + gate.waitStatement() + "; END IF");
            try (RequestsInFlight<Response> sent = RequestsInFlight.start(10, () -> Api.deposit(ops, user, key, 2500))) {
                gate.awaitWaiter(db);
                twinsWaiting = LockWaits.awaitWaiting(db, "idempotency_record", null, "INSERT INTO idempotency_record", 1);
                answeredMeanwhile = sent.answered();
                gate.release();
                answers = sent.answers();
            }
        } finally {
            // Once the gate's session has ended: a statement still at the gate would hold up the DROP.
            db.update("DROP TRIGGER IF EXISTS test_ledger_line_waits");
        }

        assertTrue(twinsWaiting >= 1 && answeredMeanwhile == 0, "set-up: twins' claims waited on the first deposit's open claim, "
                + "and none was answered before it committed: " + twinsWaiting + " waiting, " + answeredMeanwhile + " answered");
        long executed = answers.stream().filter(a -> a.statusCode() == 201 && a.header("Idempotent-Replayed") == null).count();
        assertEquals(1, executed);
        answers.forEach(a -> assertTrue(a.statusCode() == 201 || a.statusCode() == 409, a.asString()));
        assertEquals(2500, db.balance(user));
        assertEquals(1, db.entries(user));
        Response later = Api.deposit(ops, user, key, 2500);
        assertEquals("true", later.header("Idempotent-Replayed"));
        assertEquals(2500, later.jsonPath().getLong("balance"));
    }

    @Test
    void reusingADepositKeyForAnotherAmountNamesTheField() {
        String user = Buyer.withBalance(0).userId();
        String key = Api.newKey();
        assertEquals(201, Api.deposit(ops, user, key, 100).statusCode());

        Response reused = Api.deposit(ops, user, key, 200);

        assertEquals(422, reused.statusCode());
        assertTrue(reused.jsonPath().getString("detail").endsWith("amount."), reused.asString());
        assertEquals(100, db.balance(user));
    }

    @Test
    void aDepositNeedsAKeyAndAnInvalidOneClaimsNothing() {
        String user = Buyer.withBalance(0).userId();
        String key = Api.newKey();

        Response missing = Api.as(ops).contentType("application/json").body("{\"amount\":100,\"currency\":\"EUR\",\"reference\":\"d-1\"}")
                .post("/accounts/" + user + "/deposits");
        Response invalidBody = Api.as(ops).header("Idempotency-Key", key).contentType("application/json")
                .body("{\"amount\":-100,\"currency\":\"EUR\"}").post("/accounts/" + user + "/deposits");
        Response valid = Api.deposit(ops, user, key, 100);

        assertEquals(400, missing.statusCode());
        assertEquals("IDEMPOTENCY_KEY_MISSING", missing.jsonPath().getString("code"));
        assertEquals(400, invalidBody.statusCode());
        assertEquals(201, valid.statusCode(), "the rejected request left the key unclaimed");
        assertEquals(100, db.balance(user));
    }

    @Test
    void depositsAreForOpsOnly() {
        Buyer buyer = Buyer.withBalance(0);

        Response response = Api.deposit(buyer.bearer(), buyer.userId(), Api.newKey(), 100);

        assertEquals(403, response.statusCode());
        assertEquals(0, db.balance(buyer.userId()));
    }

    @Test
    void aDepositToAMissingAccountIsRecordedAsNotFound() {
        String nobody = Tokens.newUserId();
        String key = Api.newKey();

        Response first = Api.deposit(ops, nobody, key, 100);
        Response again = Api.deposit(ops, nobody, key, 100);

        assertEquals(404, first.statusCode());
        assertEquals("ACCOUNT_NOT_FOUND", first.jsonPath().getString("code"));
        assertEquals("true", again.header("Idempotent-Replayed"));
    }

    @Test
    void aDepositInAnotherCurrencyIsRefused() {
        String user = Buyer.withBalance(0).userId();

        Response response = Api.as(ops).header("Idempotency-Key", Api.newKey()).contentType("application/json")
                .body("{\"amount\":100,\"currency\":\"USD\",\"reference\":\"d-1\"}").post("/accounts/" + user + "/deposits");

        assertEquals(409, response.statusCode());
        assertEquals("CURRENCY_MISMATCH", response.jsonPath().getString("code"));
        assertEquals(0, db.balance(user));
    }

    @Test
    void oneSettlementSentByTwoOpsIdentitiesIsCreditedOnce() {
        String user = Buyer.withBalance(0).userId();
        String reference = newReference();
        String firstSender = Tokens.ops();
        String secondSender = Tokens.ops();
        String secondKey = Api.newKey();

        Response first = Api.deposit(firstSender, user, Api.newKey(), 700, reference);
        Response second = Api.deposit(secondSender, user, secondKey, 700, reference);
        Response secondRetried = Api.deposit(secondSender, user, secondKey, 700, reference);

        assertEquals(201, first.statusCode(), first.asString());
        assertEquals(409, second.statusCode(), second.asString());
        assertEquals("ALREADY_APPLIED", second.jsonPath().getString("code"));
        assertNull(second.header("Idempotent-Replayed"));
        assertEquals(409, secondRetried.statusCode(), secondRetried.asString());
        assertEquals("true", secondRetried.header("Idempotent-Replayed"), "the refusal is recorded under its key");
        assertEquals(second.asString(), secondRetried.asString());
        assertEquals(700, db.balance(user));
        assertEquals(1, db.count("SELECT COUNT(*) FROM account_entry WHERE user_id = ? AND ref_type = 'DEPOSIT'", user));
    }

    /**
     * Another session holds the account row until all ten deposits, each under its own key, wait on it
     * to credit: they are in their transactions at once every time, and once let go, the ledger line's
     * unique reference keeps all but the first to credit from crediting. Each waits in its one credit
     * statement until the test lets go.
     */
    @Test
    void tenOpsIdentitiesRacingOneSettlementCreditItOnce() throws Exception {
        String user = Buyer.withBalance(0).userId();
        String reference = newReference();
        List<Callable<Response>> senders = new ArrayList<>();
        for (int i = 0; i < 10; i++) {
            String sender = Tokens.ops();
            String key = Api.newKey();
            senders.add(() -> Api.deposit(sender, user, key, 1200, reference));
        }

        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdAccountRowUntil(db, user, release);
        List<Response> answers;
        long waiting;
        try (RequestsInFlight<Response> sent = RequestsInFlight.start(senders)) {
            waiting = LockWaits.awaitWaiting(db, "account", null, "UPDATE account SET balance = balance + ", 10);
            release.complete(null);
            answers = sent.answers();
        } finally {
            release.complete(null); // when the set-up failed too, not after the holder's 30 s
        }
        rowReleased.get(10, TimeUnit.SECONDS);

        assertEquals(10, waiting, "set-up: the ten deposits waited on the account row at once");
        assertEquals(1, answers.stream().filter(a -> a.statusCode() == 201).count(),
                "statuses: " + answers.stream().map(Response::statusCode).toList());
        answers.stream().filter(a -> a.statusCode() != 201).forEach(refused -> {
            assertEquals(409, refused.statusCode(), refused.asString());
            assertEquals("ALREADY_APPLIED", refused.jsonPath().getString("code"), refused.asString());
        });
        assertEquals(1200, db.balance(user));
        assertEquals(1, db.entries(user));
    }

    @Test
    void theSameReferenceOnAnotherAccountIsAnotherDeposit() {
        String alice = Buyer.withBalance(0).userId();
        String bob = Buyer.withBalance(0).userId();
        String reference = newReference();

        Response toAlice = Api.deposit(ops, alice, Api.newKey(), 300, reference);
        Response toBob = Api.deposit(ops, bob, Api.newKey(), 500, reference);

        assertEquals(201, toAlice.statusCode(), toAlice.asString());
        assertEquals(201, toBob.statusCode(), toBob.asString());
        assertEquals(300, db.balance(alice));
        assertEquals(500, db.balance(bob));
    }

    private static String newReference() {
        return "settlement-" + UUID.randomUUID();
    }
}
