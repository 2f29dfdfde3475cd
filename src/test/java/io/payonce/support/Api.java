package io.payonce.support;

import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The HTTP calls the tests make, as a user or ops would make them. */
public final class Api {

    private Api() {
    }

    public static RequestSpecification as(String bearer) {
        return RestAssured.given().auth().oauth2(bearer);
    }

    public static String submitToken(String bearer) {
        Response response = as(bearer).get("/orders/token");
        assertEquals(200, response.statusCode(), response.asString());
        return response.jsonPath().getString("token");
    }

    public static Response createOrder(String bearer, String submitToken, String orderSn, long amount) {
        return as(bearer)
                .header("Submit-Token", submitToken)
                .contentType(ContentType.JSON)
                .body(Map.of("orderSn", orderSn, "amount", amount, "currency", "EUR"))
                .post("/orders");
    }

    /** Creates an order for the bearer's user and returns its id. */
    public static long newOrder(String bearer, long amount) {
        Response response = createOrder(bearer, submitToken(bearer), "sn-" + java.util.UUID.randomUUID(), amount);
        assertEquals(201, response.statusCode(), response.asString());
        return response.jsonPath().getLong("id");
    }

    public static Response transition(String bearer, long orderId, String action) {
        return as(bearer).post("/orders/" + orderId + "/" + action);
    }
}
