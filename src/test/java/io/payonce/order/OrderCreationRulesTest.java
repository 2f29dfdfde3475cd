package io.payonce.order;

import io.payonce.support.Api;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/** What creating an order checks: whose order number it is, the currency of the owner's account, where the order lives. */
@QuarkusTest
class OrderCreationRulesTest {

    private final Database db = Database.forTests();

    @Test
    void anotherUserMayUseTheSameOrderNumber() {
        String alice = Tokens.newUserId();
        String bob = Tokens.newUserId();
        String carol = Tokens.newUserId();
        String aliceBearer = Tokens.user(alice);
        String bobBearer = Tokens.user(bob);
        String sn = newSn();
        Response alicesOrder = Api.createOrder(aliceBearer, Api.submitToken(aliceBearer), sn, 900);
        assertEquals(201, alicesOrder.statusCode(), alicesOrder.asString());
        long alicesId = alicesOrder.jsonPath().getLong("id");

        Response sameContent = Api.createOrder(bobBearer, Api.submitToken(bobBearer), sn, 900);
        Response otherContent = createWithKey(Tokens.user(carol), Api.newKey(), sn, 400, "EUR");

        assertOwnNewOrder(sameContent, bob, 900, alicesId, alice);
        assertOwnNewOrder(otherContent, carol, 400, alicesId, alice);
        assertEquals(3, db.count("SELECT COUNT(*) FROM orders WHERE order_sn = ?", sn));
        assertEquals(900, db.count("SELECT amount FROM orders WHERE id = ?", alicesId), "Alice's order is untouched");
    }

    @Test
    void theSameUsersNumberWithOtherContentIsStillAConflict() {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);
        String sn = newSn();
        Response first = Api.createOrder(bearer, Api.submitToken(bearer), sn, 900);
        assertEquals(201, first.statusCode(), first.asString());

        Response withToken = Api.createOrder(bearer, Api.submitToken(bearer), sn, 901);
        Response withKey = createWithKey(bearer, Api.newKey(), sn, 902, "EUR");

        assertRefused(withToken, "ORDER_SN_CONFLICT");
        assertRefused(withKey, "ORDER_SN_CONFLICT");
        assertEquals(1, db.count("SELECT COUNT(*) FROM orders WHERE user_id = ? AND order_sn = ?", user, sn));
        assertEquals(900, db.count("SELECT amount FROM orders WHERE user_id = ? AND order_sn = ?", user, sn));
    }

    @Test
    void anOrderInACurrencyTheAccountDoesNotHoldIsRefusedAtCreation() {
        Buyer buyer = Buyer.withBalance(1_000);
        String key = Api.newKey();
        String keySn = newSn();

        Response withToken = createWithToken(buyer.bearer(), Api.submitToken(buyer.bearer()), newSn(), 500, "USD");
        Response withKey = createWithKey(buyer.bearer(), key, keySn, 500, "USD");
        Response withKeyAgain = createWithKey(buyer.bearer(), key, keySn, 500, "USD");

        assertRefused(withToken, "CURRENCY_MISMATCH");
        assertRefused(withKey, "CURRENCY_MISMATCH");
        assertNull(withKey.header("Idempotent-Replayed"));
        assertEquals(409, withKeyAgain.statusCode(), withKeyAgain.asString());
        assertEquals("true", withKeyAgain.header("Idempotent-Replayed"), "the refusal is recorded under its key");
        assertEquals(withKey.asString(), withKeyAgain.asString());
        assertEquals(0, db.count("SELECT COUNT(*) FROM orders WHERE user_id = ?", buyer.userId()));
    }

    @Test
    void aUserWithoutAnAccountMayStillOrder() {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);

        Response inEuros = Api.createOrder(bearer, Api.submitToken(bearer), newSn(), 500);
        Response inDollars = createWithKey(bearer, Api.newKey(), newSn(), 500, "USD");

        assertEquals(201, inEuros.statusCode(), inEuros.asString());
        assertEquals(201, inDollars.statusCode(), inDollars.asString());
        assertEquals(2, db.count("SELECT COUNT(*) FROM orders WHERE user_id = ?", user));
        assertEquals(0, db.count("SELECT COUNT(*) FROM account WHERE user_id = ?", user));
    }

    @Test
    void every201CarriesLocation() {
        String bearer = Tokens.user(Tokens.newUserId());
        String token = Api.submitToken(bearer);
        String tokenSn = newSn();
        String key = Api.newKey();
        String keySn = newSn();

        Response byToken = Api.createOrder(bearer, token, tokenSn, 600);
        Response byTokenAgain = Api.createOrder(bearer, token, tokenSn, 600);
        Response byKey = createWithKey(bearer, key, keySn, 700, "EUR");
        Response byKeyAgain = createWithKey(bearer, key, keySn, 700, "EUR");

        assertCreatedAndReplayedAtItsLocation(byToken, byTokenAgain);
        assertCreatedAndReplayedAtItsLocation(byKey, byKeyAgain);
        assertNotEquals(byToken.jsonPath().getLong("id"), byKey.jsonPath().getLong("id"));
    }

    private static void assertOwnNewOrder(Response answer, String owner, long amount, long othersId, String other) {
        assertEquals(201, answer.statusCode(), answer.asString());
        assertNull(answer.header("Idempotent-Replayed"), "a new order, not another user's order replayed");
        assertNotEquals(othersId, answer.jsonPath().getLong("id"));
        assertEquals(owner, answer.jsonPath().getString("userId"));
        assertEquals(amount, answer.jsonPath().getLong("amount"));
        assertFalse(answer.asString().contains(other), "the answer names nothing of the other user: " + answer.asString());
    }

    private static void assertRefused(Response answer, String code) {
        assertEquals(409, answer.statusCode(), answer.asString());
        assertEquals(code, answer.jsonPath().getString("code"), answer.asString());
    }

    private static void assertCreatedAndReplayedAtItsLocation(Response first, Response replay) {
        assertEquals(201, first.statusCode(), first.asString());
        assertNull(first.header("Idempotent-Replayed"));
        assertEquals(201, replay.statusCode(), replay.asString());
        assertEquals("true", replay.header("Idempotent-Replayed"));
        String expected = "/orders/" + first.jsonPath().getLong("id");
        assertEquals(expected, locationPath(first));
        assertEquals(expected, locationPath(replay), "the replay names the same order");
    }

    /** The path of the Location header, which may arrive absolute. */
    private static String locationPath(Response response) {
        String location = response.header("Location");
        assertNotNull(location, "a 201 names what it created: " + response.asString());
        return URI.create(location).getPath();
    }

    private static Response createWithToken(String bearer, String token, String sn, long amount, String currency) {
        return Api.as(bearer).header("Submit-Token", token).contentType(ContentType.JSON)
                .body(Map.of("orderSn", sn, "amount", amount, "currency", currency)).post("/orders");
    }

    private static Response createWithKey(String bearer, String key, String sn, long amount, String currency) {
        return Api.as(bearer).header("Idempotency-Key", key).contentType(ContentType.JSON)
                .body(Map.of("orderSn", sn, "amount", amount, "currency", currency)).post("/orders");
    }

    private static String newSn() {
        return "sn-" + UUID.randomUUID();
    }
}
