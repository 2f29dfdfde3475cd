package io.payonce.account;

import io.payonce.support.Api;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@QuarkusTest
@ExtendWith(LedgerInvariants.class)
class DepositTest {

    private final Database db = Database.forTests();

    private final String ops = Tokens.ops();

    @Test
    void aDepositRetriedWithItsKeyCreditsOnce() throws Exception {
        String user = Tokens.newUserId();
        Api.fundedAccount(user, 0);
        String key = Api.newKey();

        List<Response> answers = Concurrently.run(10, () -> Api.deposit(ops, user, key, 2500));

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
        String user = Tokens.newUserId();
        Api.fundedAccount(user, 0);
        String key = Api.newKey();
        Api.deposit(ops, user, key, 100);

        Response reused = Api.deposit(ops, user, key, 200);

        assertEquals(422, reused.statusCode());
        assertTrue(reused.jsonPath().getString("detail").endsWith("amount."), reused.asString());
        assertEquals(100, db.balance(user));
    }

    @Test
    void aDepositNeedsAKeyAndAnInvalidOneClaimsNothing() {
        String user = Tokens.newUserId();
        Api.fundedAccount(user, 0);
        String key = Api.newKey();

        Response missing = Api.as(ops).contentType("application/json").body("{\"amount\":100,\"currency\":\"EUR\"}")
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
        String user = Tokens.newUserId();
        Api.fundedAccount(user, 0);

        Response response = Api.deposit(Tokens.user(user), user, Api.newKey(), 100);

        assertEquals(403, response.statusCode());
        assertEquals(0, db.balance(user));
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
        String user = Tokens.newUserId();
        Api.fundedAccount(user, 0);

        Response response = Api.as(ops).header("Idempotency-Key", Api.newKey()).contentType("application/json")
                .body("{\"amount\":100,\"currency\":\"USD\"}").post("/accounts/" + user + "/deposits");

        assertEquals(409, response.statusCode());
        assertEquals("CURRENCY_MISMATCH", response.jsonPath().getString("code"));
        assertEquals(0, db.balance(user));
    }
}
