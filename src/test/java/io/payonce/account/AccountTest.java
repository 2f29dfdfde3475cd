package io.payonce.account;

import io.payonce.support.Api;
import io.payonce.support.Database;
import io.payonce.support.Replays;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

@QuarkusTest
class AccountTest {

    private final Database db = Database.forTests();

    private final String ops = Tokens.ops();

    @Test
    void opsOpensAnAccountOnceAndARepeatAnswersWithIt() {
        String user = Tokens.newUserId();

        Response first = open(user, "EUR");
        Response again = open(user, "EUR");

        assertEquals(201, first.statusCode(), first.asString());
        assertEquals("/accounts/" + user, java.net.URI.create(first.header("Location")).getPath());
        assertEquals(0, first.jsonPath().getLong("balance"));
        Replays.assertReplayOf(first, again);
        assertEquals(1, db.count("SELECT COUNT(*) FROM account WHERE user_id = ?", user));
    }

    @Test
    void reopeningInAnotherCurrencyIsAConflict() {
        String user = Tokens.newUserId();
        open(user, "EUR");

        Response response = open(user, "USD");

        assertEquals(409, response.statusCode());
        assertEquals("ACCOUNT_EXISTS", response.jsonPath().getString("code"));
        assertEquals("EUR", db.string("SELECT currency FROM account WHERE user_id = ?", user));
    }

    @Test
    void theOwnerAndOpsReadTheAccountAndNobodyElse() {
        String user = Tokens.newUserId();
        open(user, "EUR");

        assertEquals(200, Api.as(Tokens.user(user)).get("/accounts/" + user).statusCode());
        assertEquals(200, Api.as(ops).get("/accounts/" + user).statusCode());
        Response stranger = Api.as(Tokens.user(Tokens.newUserId())).get("/accounts/" + user);
        assertEquals(404, stranger.statusCode());
        assertEquals("ACCOUNT_NOT_FOUND", stranger.jsonPath().getString("code"));
        assertEquals(200, Api.as(Tokens.user(user)).get("/accounts/" + user + "/entries").statusCode());
        assertEquals(404, Api.as(Tokens.user(Tokens.newUserId())).get("/accounts/" + user + "/entries").statusCode());
    }

    @Test
    void aMissingAccountIsNotFound() {
        String user = Tokens.newUserId();

        Response response = Api.as(Tokens.user(user)).get("/accounts/" + user);

        assertEquals(404, response.statusCode());
        assertEquals("ACCOUNT_NOT_FOUND", response.jsonPath().getString("code"));
    }

    @Test
    void theLedgerPagesNewestFirst() {
        String user = Tokens.newUserId();
        open(user, "EUR");
        for (int i = 1; i <= 5; i++) {
            assertEquals(201, Api.deposit(ops, user, Api.newKey(), 100L * i).statusCode());
        }

        Response firstPage = Api.as(Tokens.user(user)).queryParam("limit", 3).get("/accounts/" + user + "/entries");
        long next = firstPage.jsonPath().getLong("nextBeforeId");
        Response lastPage = Api.as(Tokens.user(user)).queryParam("limit", 3).queryParam("beforeId", next)
                .get("/accounts/" + user + "/entries");

        assertEquals(List.of(500, 400, 300), firstPage.jsonPath().getList("entries.delta"));
        assertEquals(List.of(200, 100), lastPage.jsonPath().getList("entries.delta"));
        assertNull(lastPage.jsonPath().get("nextBeforeId"));
    }

    private Response open(String user, String currency) {
        return Api.as(ops).contentType("application/json").body(Map.of("userId", user, "currency", currency)).post("/accounts");
    }
}
