package io.payonce.support;

import io.restassured.http.ContentType;
import io.restassured.response.Response;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A user with an open EUR account, funded by ops, and the bearer token to act as them: where nearly
 * every money test begins. Made through the API as a client and ops would make it, so that it works
 * beside the app under test and beside the packaged one alike.
 */
public record Buyer(String userId, String bearer) {

    /** A new user whose account holds {@code balance} minor units; 0 leaves it open and empty. */
    public static Buyer withBalance(long balance) {
        return named(Tokens.newUserId(), balance);
    }

    /** A new user who never opened an account: they may still order, and pay by card. */
    public static Buyer withoutAccount() {
        String userId = Tokens.newUserId();
        return new Buyer(userId, Tokens.user(userId));
    }

    /** As {@link #withBalance}, for a user id the test chooses: one it searches for, or the longest allowed. */
    public static Buyer named(String userId, long balance) {
        String ops = Tokens.ops();
        Response opened = Api.as(ops).contentType(ContentType.JSON).body(Map.of("userId", userId, "currency", "EUR")).post("/accounts");
        assertEquals(201, opened.statusCode(), opened.asString());
        if (balance > 0) {
            Response deposited = Api.deposit(ops, userId, "fund-" + UUID.randomUUID(), balance);
            assertEquals(201, deposited.statusCode(), deposited.asString());
        }
        return new Buyer(userId, Tokens.user(userId));
    }

    /** A new unpaid order of {@code amount}, created under a submit token. */
    public long newOrder(long amount) {
        return Api.newOrder(bearer, amount);
    }

    /** A new unpaid order of {@code amount} and a fresh key to pay it with. */
    public Checkout checkout(long amount) {
        return new Checkout(userId, bearer, newOrder(amount), Api.newKey());
    }

    /** A new order of {@code amount} paid from the balance; fails unless the pay was charged. */
    public long paidOrder(long amount) {
        long order = newOrder(amount);
        Response paid = Api.pay(bearer, order, Api.newKey());
        assertEquals(201, paid.statusCode(), paid.asString());
        return order;
    }

    /**
     * A new order of {@code amount} paid by card with {@code cardToken}, sent again under its key while
     * its outcome is unknown (a cold processor client may answer late); fails unless the card was charged.
     */
    public long paidByCard(long amount, String cardToken) {
        Checkout checkout = checkout(amount);
        Response paid = Await.until(() -> checkout.payByCard(cardToken), answer -> answer.statusCode() != 202, Duration.ofSeconds(20),
                "the card pay of order " + checkout.order() + " settled");
        assertEquals(201, paid.statusCode(), paid.asString());
        return checkout.order();
    }

    /** A buyer at the checkout: their unpaid order and the key the client pays it with, however often it sends. */
    public record Checkout(String userId, String bearer, long order, String key) {

        /** Pays from the balance. */
        public Response pay() {
            return Api.pay(bearer, order, key);
        }

        public Response payByCard(String cardToken) {
            return Api.payByCard(bearer, order, key, cardToken);
        }
    }
}
