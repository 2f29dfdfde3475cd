package io.payonce.support;

import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;

import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Supplier;

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

    /** Creates an order for the bearer's user, under a submit token, and returns its id. */
    public static long newOrder(String bearer, long amount) {
        Response response = createOrder(bearer, submitToken(bearer), "sn-" + UUID.randomUUID(), amount);
        assertEquals(201, response.statusCode(), response.asString());
        return response.jsonPath().getLong("id");
    }

    /** Creates an order under an Idempotency-Key instead of a submit token (no Redis involved) and returns its id. */
    public static long newOrderWithKey(String bearer, long amount) {
        Response response = as(bearer).header("Idempotency-Key", newKey()).contentType(ContentType.JSON)
                .body(Map.of("orderSn", "sn-" + UUID.randomUUID(), "amount", amount, "currency", "EUR")).post("/orders");
        assertEquals(201, response.statusCode(), response.asString());
        return response.jsonPath().getLong("id");
    }

    public static Response transition(String bearer, long orderId, String action) {
        return as(bearer).post("/orders/" + orderId + "/" + action);
    }

    public static Response pay(String bearer, long orderId, String key) {
        return as(bearer).header("Idempotency-Key", key).post("/orders/" + orderId + "/pay");
    }

    /** A card pay: the body names the method and the card's token, as a checkout page sends it. */
    public static Response payByCard(String bearer, long orderId, String key, String cardToken) {
        return as(bearer).header("Idempotency-Key", key).contentType(ContentType.JSON)
                .body(Map.of("method", "card", "cardToken", cardToken)).post("/orders/" + orderId + "/pay");
    }

    /** A client paying as clients should: the same request, with the same key, again while the answer says "retry later". */
    public static Response payUntilSettled(String bearer, long orderId, String key) {
        return untilSettled(() -> pay(bearer, orderId, key));
    }

    /** Sends {@code request} again, after a short jittered pause, while its answer carries Retry-After; for 30 s at most. */
    public static Response untilSettled(Supplier<Response> request) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (true) {
            Response response = request.get();
            if (response.header("Retry-After") == null || System.nanoTime() > deadline) {
                return response;
            }
            try {
                Thread.sleep(20 + ThreadLocalRandom.current().nextInt(30));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return response;
            }
        }
    }

    public static Response refund(String bearer, long orderId, String key, String refundNo, long amount) {
        return as(bearer).header("Idempotency-Key", key).contentType(ContentType.JSON)
                .body(Map.of("refundNo", refundNo, "amount", amount))
                .post("/orders/" + orderId + "/refunds");
    }

    /** A deposit whose external reference is its key, as a settlement system that keys by its own reference would send. */
    public static Response deposit(String opsBearer, String userId, String key, long amount) {
        return deposit(opsBearer, userId, key, amount, key);
    }

    public static Response deposit(String opsBearer, String userId, String key, long amount, String reference) {
        return as(opsBearer).header("Idempotency-Key", key).contentType(ContentType.JSON)
                .body(Map.of("amount", amount, "currency", "EUR", "reference", reference))
                .post("/accounts/" + userId + "/deposits");
    }

    public static String newKey() {
        return "k-" + UUID.randomUUID();
    }
}
