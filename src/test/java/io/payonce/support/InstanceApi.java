package io.payonce.support;

import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

import java.util.Map;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Accounts, deposits and orders made through a packaged instance's API, on its port, as a client would. */
public final class InstanceApi {

    private InstanceApi() {
    }

    /** A JSON request to the instance on {@code port} with the bearer token. */
    public static RequestSpecification on(int port, String bearer) {
        return RestAssured.given().port(port).auth().oauth2(bearer).contentType(ContentType.JSON);
    }

    /** Opens the user's account in EUR and deposits {@code amount} into it, as operations would. */
    public static void fund(int port, String userId, long amount) {
        String ops = Tokens.ops();
        assertEquals(201, on(port, ops).body(Map.of("userId", userId, "currency", "EUR")).post("/accounts").statusCode());
        String reference = "fund-" + UUID.randomUUID();
        assertEquals(201, on(port, ops).header("Idempotency-Key", reference)
                .body(Map.of("amount", amount, "currency", "EUR", "reference", reference))
                .post("/accounts/" + userId + "/deposits").statusCode());
    }

    /** A new unpaid order of {@code amount} EUR for the bearer's user; its id. */
    public static long newOrder(int port, String bearer, long amount) {
        Response created = createOrder(port, bearer, amount);
        assertEquals(201, created.statusCode(), created.asString());
        return created.jsonPath().getLong("id");
    }

    /** The answer to creating an order of {@code amount} EUR under a new key and order number, whatever it is. */
    public static Response createOrder(int port, String bearer, long amount) {
        return on(port, bearer).header("Idempotency-Key", "order-" + UUID.randomUUID())
                .body(Map.of("orderSn", "sn-" + UUID.randomUUID(), "amount", amount, "currency", "EUR")).post("/orders");
    }

    /** Refunds {@code amount} of the paid {@code order} under {@code key}, which is its refund number too; the bearer must be ops. */
    public static Response refund(int port, String bearer, long order, String key, long amount) {
        return on(port, bearer).header("Idempotency-Key", key)
                .body(Map.of("refundNo", key, "amount", amount)).post("/orders/" + order + "/refunds");
    }

    /** The bearer's order as the instance reads it. */
    public static Response order(int port, String bearer, long order) {
        return on(port, bearer).get("/orders/" + order);
    }

    /** Pays {@code order} from the bearer's balance under {@code key}: no body, as a balance pay has none. */
    public static Response pay(int port, String bearer, long order, String key) {
        return RestAssured.given().port(port).auth().oauth2(bearer).header("Idempotency-Key", key).post("/orders/" + order + "/pay");
    }
}
