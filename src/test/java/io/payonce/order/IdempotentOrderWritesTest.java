package io.payonce.order;

import io.payonce.support.Api;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.Replays;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Order creation and transitions sent with an Idempotency-Key instead of relying on tokens or CAS alone. */
@QuarkusTest
class IdempotentOrderWritesTest {

    private final Database db = Database.forTests();

    @Test
    void concurrentCreatesWithOneKeyMakeOneOrderAndReplayIt() throws Exception {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);
        String key = Api.newKey();
        String sn = "sn-" + UUID.randomUUID();

        List<Response> answers = Concurrently.run(8, () -> createWithKey(bearer, key, sn, 900));

        long created = answers.stream().filter(a -> a.statusCode() == 201 && a.header("Idempotent-Replayed") == null).count();
        assertEquals(1, created);
        Response firstCreated = answers.stream().filter(a -> a.statusCode() == 201).findFirst().orElseThrow();
        answers.stream().filter(a -> a.statusCode() == 201).forEach(a -> Replays.assertSameAnswer(firstCreated, a));
        answers.forEach(a -> assertTrue(a.statusCode() == 201 || a.statusCode() == 409, a.asString()));
        assertEquals(1, db.count("SELECT COUNT(*) FROM orders WHERE user_id = ?", user));
    }

    @Test
    void reusingACreateKeyForAnotherOrderNamesTheFields() {
        String bearer = Tokens.user(Tokens.newUserId());
        String key = Api.newKey();
        createWithKey(bearer, key, "sn-" + UUID.randomUUID(), 900);

        Response reused = createWithKey(bearer, key, "sn-" + UUID.randomUUID(), 900);

        assertEquals(422, reused.statusCode());
        assertEquals("IDEMPOTENCY_KEY_REUSED", reused.jsonPath().getString("code"));
        assertTrue(reused.jsonPath().getString("detail").endsWith("orderSn."), reused.asString());
    }

    @Test
    void aTransitionWithAKeyReplaysItsFirstAnswer() {
        String bearer = Tokens.user(Tokens.newUserId());
        long order = Api.newOrder(bearer, 500);
        String key = Api.newKey();

        Response first = Api.as(bearer).header("Idempotency-Key", key).post("/orders/" + order + "/cancel");
        Response replay = Api.as(bearer).header("Idempotency-Key", key).post("/orders/" + order + "/cancel");
        Response withoutKey = Api.transition(bearer, order, "cancel");

        assertEquals(200, first.statusCode(), first.asString());
        assertEquals("CLOSED", first.jsonPath().getString("status"));
        assertNull(first.header("Idempotent-Replayed"));
        Replays.assertReplayOf(first, replay);
        assertEquals(200, withoutKey.statusCode(), withoutKey.asString());
        assertEquals("true", withoutKey.header("Idempotent-Replayed"), "the order was closed already: a repeat");
    }

    @Test
    void anIllegalTransitionWithAKeyIsRecorded() {
        String bearer = Tokens.user(Tokens.newUserId());
        long order = Api.newOrder(bearer, 500);
        String key = Api.newKey();
        String ops = Tokens.ops();

        Response first = Api.as(ops).header("Idempotency-Key", key).post("/orders/" + order + "/ship");
        Response replay = Api.as(ops).header("Idempotency-Key", key).post("/orders/" + order + "/ship");

        assertEquals(409, first.statusCode());
        assertEquals("ILLEGAL_TRANSITION", first.jsonPath().getString("code"));
        Replays.assertReplayOf(first, replay);
    }

    private static Response createWithKey(String bearer, String key, String sn, long amount) {
        return Api.as(bearer).header("Idempotency-Key", key).contentType(ContentType.JSON)
                .body(Map.of("orderSn", sn, "amount", amount, "currency", "EUR")).post("/orders");
    }
}
