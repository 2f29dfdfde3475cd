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
        Response created = on(port, bearer).header("Idempotency-Key", "order-" + UUID.randomUUID())
                .body(Map.of("orderSn", "sn-" + UUID.randomUUID(), "amount", amount, "currency", "EUR")).post("/orders");
        assertEquals(201, created.statusCode(), created.asString());
        return created.jsonPath().getLong("id");
    }
}
