package io.payonce.commands;

import io.payonce.support.Api;
import io.payonce.support.Buyer;
import io.restassured.response.Response;

/** A user with an account (no balance needed: the card pays), a bearer token, an unpaid order and a key. */
record CardBuyer(String userId, String bearer, long order, String key) {

    static CardBuyer withOrder(long amount) {
        Buyer.Checkout checkout = Buyer.withBalance(0).checkout(amount);
        return new CardBuyer(checkout.userId(), checkout.bearer(), checkout.order(), checkout.key());
    }

    Response payOverHttp(String key, String cardToken) {
        return Api.payByCard(bearer, order, key, cardToken);
    }

    String cardCommand(String cardToken) {
        return command(",\"method\":\"card\",\"cardToken\":\"" + cardToken + "\"");
    }

    /** A pay command for this order, with {@code more} fields after its user and order. */
    String command(String more) {
        return "{\"type\":\"pay\",\"userId\":\"" + userId + "\",\"orderId\":" + order + more + "}";
    }

    String processorKey(long payment) {
        return Api.as(bearer).get("/payments/" + payment).jsonPath().getString("processorKey");
    }
}
