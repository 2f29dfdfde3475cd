package io.payonce.api;

import io.payonce.support.Api;
import io.payonce.support.Database;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Bad requests to POST /orders carrying a valid, unused submit token: had validation been skipped,
 * each would have written an order. Every one must be a 4xx problem with its code and write nothing.
 */
@QuarkusTest
class MalformedInputTest {

    private static final String VALID_SN = "\"orderSn\":\"sn-valid\"";

    private final Database db = Database.forTests();

    static Stream<Arguments> badOrderBodies() {
        return Stream.of(
                body("truncated JSON", "{\"orderSn\":\"a\",\"amount\":", 400, "MALFORMED_REQUEST"),
                body("not JSON at all", "orderSn=a&amount=1", 400, "MALFORMED_REQUEST"),
                body("a JSON array", "[1,2,3]", 400, "MALFORMED_REQUEST"),
                body("amount as a string", "{" + VALID_SN + ",\"amount\":\"100\",\"currency\":\"EUR\"}", 400, "MALFORMED_REQUEST"),
                body("amount with decimals", "{" + VALID_SN + ",\"amount\":10.5,\"currency\":\"EUR\"}", 400, "MALFORMED_REQUEST"),
                body("amount with an exponent", "{" + VALID_SN + ",\"amount\":1e3,\"currency\":\"EUR\"}", 400, "MALFORMED_REQUEST"),
                body("amount beyond 64 bits", "{" + VALID_SN + ",\"amount\":99999999999999999999999,\"currency\":\"EUR\"}", 400, "MALFORMED_REQUEST"),
                body("an unknown field", "{" + VALID_SN + ",\"amount\":100,\"currency\":\"EUR\",\"userId\":\"victim\"}", 400, "MALFORMED_REQUEST"),
                body("a duplicate field", "{" + VALID_SN + ",\"amount\":1,\"amount\":100000,\"currency\":\"EUR\"}", 400, "MALFORMED_REQUEST"),
                body("trailing content", "{" + VALID_SN + ",\"amount\":100,\"currency\":\"EUR\"} {}", 400, "MALFORMED_REQUEST"),
                body("deep nesting", "{\"orderSn\":" + "[".repeat(5000) + "]".repeat(5000) + "}", 400, "MALFORMED_REQUEST"),
                body("amount zero", "{" + VALID_SN + ",\"amount\":0,\"currency\":\"EUR\"}", 400, "VALIDATION_FAILED"),
                body("amount negative", "{" + VALID_SN + ",\"amount\":-100,\"currency\":\"EUR\"}", 400, "VALIDATION_FAILED"),
                body("amount above the maximum", "{" + VALID_SN + ",\"amount\":100000001,\"currency\":\"EUR\"}", 400, "VALIDATION_FAILED"),
                body("amount null", "{" + VALID_SN + ",\"amount\":null,\"currency\":\"EUR\"}", 400, "VALIDATION_FAILED"),
                body("order number missing", "{\"amount\":100,\"currency\":\"EUR\"}", 400, "VALIDATION_FAILED"),
                body("order number of 65 characters", "{\"orderSn\":\"" + "s".repeat(65) + "\",\"amount\":100,\"currency\":\"EUR\"}", 400, "VALIDATION_FAILED"),
                body("order number not ASCII", "{\"orderSn\":\"commande-été\",\"amount\":100,\"currency\":\"EUR\"}", 400, "VALIDATION_FAILED"),
                body("order number with SQL", "{\"orderSn\":\"x'; DROP TABLE orders; --\",\"amount\":100,\"currency\":\"EUR\"}", 400, "VALIDATION_FAILED"),
                body("currency in lower case", "{" + VALID_SN + ",\"amount\":100,\"currency\":\"eur\"}", 400, "VALIDATION_FAILED"),
                body("empty body", "", 400, "VALIDATION_FAILED"),
                body("JSON null", "null", 400, "VALIDATION_FAILED"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("badOrderBodies")
    void aBadOrderBodyIsRejectedAndWritesNothing(String description, String body, int status, String code) {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);
        String token = Api.submitToken(bearer);

        Response response = Api.as(bearer).header("Submit-Token", token).contentType("application/json")
                .body(body.getBytes(StandardCharsets.UTF_8)).post("/orders");

        assertProblem(response, status, code);
        assertEquals(0, db.rowsOwnedBy(user), "nothing written for: " + description);
    }

    /** Text that arrives as a number or a boolean is refused, never written as "123" or "true". */
    static Stream<Arguments> orderBodiesWithScalarsForText() {
        return Stream.of(
                body("order number as a number", "{\"orderSn\":" + System.nanoTime() + ",\"amount\":100,\"currency\":\"EUR\"}", 400,
                        "MALFORMED_REQUEST"),
                body("order number as a decimal", "{\"orderSn\":" + System.nanoTime() + ".5,\"amount\":100,\"currency\":\"EUR\"}", 400,
                        "MALFORMED_REQUEST"),
                body("order number as a boolean", "{\"orderSn\":true,\"amount\":100,\"currency\":\"EUR\"}", 400, "MALFORMED_REQUEST"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("orderBodiesWithScalarsForText")
    void anOrderBodyWithANumberOrABooleanForTextIsRejectedAndWritesNothing(String description, String body, int status, String code) {
        aBadOrderBodyIsRejectedAndWritesNothing(description, body, status, code);
    }

    @Test
    void anAccountForAUserIdSentAsANumberOrABooleanIsNotOpened() {
        String numeric = String.valueOf(System.nanoTime());

        Response asNumber = Api.as(Tokens.ops()).contentType("application/json")
                .body("{\"userId\":" + numeric + ",\"currency\":\"EUR\"}").post("/accounts");
        Response asBoolean = Api.as(Tokens.ops()).contentType("application/json")
                .body("{\"userId\":true,\"currency\":\"EUR\"}").post("/accounts");

        assertProblem(asNumber, 400, "MALFORMED_REQUEST");
        assertProblem(asBoolean, 400, "MALFORMED_REQUEST");
        assertEquals(0, db.rowsOwnedBy(numeric));
    }

    @Test
    void aRejectedBodyDoesNotConsumeTheSubmitToken() {
        String bearer = Tokens.user(Tokens.newUserId());
        String token = Api.submitToken(bearer);
        Response rejected = Api.as(bearer).header("Submit-Token", token).contentType("application/json").body("{\"amount\":-1}")
                .post("/orders");
        assertEquals(400, rejected.statusCode(), rejected.asString());

        Response retry = Api.createOrder(bearer, token, "sn-" + UUID.randomUUID(), 100);

        assertEquals(201, retry.statusCode(), retry.asString());
    }

    @Test
    void aMissingSubmitTokenIsRejected() {
        String user = Tokens.newUserId();

        Response response = validOrder(Api.as(Tokens.user(user))).post("/orders");

        assertProblem(response, 400, "SUBMIT_TOKEN_MISSING");
        assertEquals(0, db.rowsOwnedBy(user));
    }

    @Test
    void anOverlongSubmitTokenIsRejected() {
        String user = Tokens.newUserId();

        Response response = validOrder(Api.as(Tokens.user(user)).header("Submit-Token", "t".repeat(65))).post("/orders");

        assertProblem(response, 400, "SUBMIT_TOKEN_MALFORMED");
        assertEquals(0, db.rowsOwnedBy(user));
    }

    @Test
    void aSubmitTokenWithForeignCharactersIsRejected() {
        String user = Tokens.newUserId();

        Response response = validOrder(Api.as(Tokens.user(user)).header("Submit-Token", "tök{en}*")).post("/orders");

        assertProblem(response, 400, "SUBMIT_TOKEN_MALFORMED");
        assertEquals(0, db.rowsOwnedBy(user));
    }

    @Test
    void aBodyInAnotherMediaTypeIsRejected() {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);

        Response response = Api.as(bearer).header("Submit-Token", Api.submitToken(bearer))
                .contentType("text/plain").body("{" + VALID_SN + ",\"amount\":100,\"currency\":\"EUR\"}").post("/orders");

        assertProblem(response, 415, "UNSUPPORTED_MEDIA_TYPE");
        assertEquals(0, db.rowsOwnedBy(user));
    }

    @Test
    void anOversizeBodyIsRejected() {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);
        String huge = "{\"orderSn\":\"" + "a".repeat(1024 * 1024) + "\",\"amount\":100,\"currency\":\"EUR\"}";

        Response response = Api.as(bearer).header("Submit-Token", Api.submitToken(bearer))
                .contentType("application/json").body(huge).post("/orders");

        assertProblem(response, 413, "PAYLOAD_TOO_LARGE");
        assertEquals(0, db.rowsOwnedBy(user));
    }

    @Test
    void aBadAccountRequestWritesNoAccount() {
        String user = "bad user id with spaces";

        Response response = Api.as(Tokens.ops()).contentType("application/json")
                .body("{\"userId\":\"" + user + "\",\"currency\":\"EUR\"}").post("/accounts");

        assertProblem(response, 400, "VALIDATION_FAILED");
        assertEquals("userId", response.jsonPath().getString("errors[0].field"));
        assertEquals(0, db.rowsOwnedBy(user));
    }

    @Test
    void badLedgerPagingIsAValidationErrorNotAServerError() {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);

        assertProblem(Api.as(bearer).queryParam("limit", "abc").get("/accounts/" + user + "/entries"), 400, "VALIDATION_FAILED");
        assertProblem(Api.as(bearer).queryParam("limit", 0).get("/accounts/" + user + "/entries"), 400, "VALIDATION_FAILED");
        assertProblem(Api.as(bearer).queryParam("beforeId", "99999999999999999999").get("/accounts/" + user + "/entries"),
                400, "VALIDATION_FAILED");
    }

    @Test
    void unknownRoutesAndMethodsAreProblems() {
        String bearer = Tokens.user(Tokens.newUserId());

        assertProblem(Api.as(bearer).get("/no/such/path"), 404, "NOT_FOUND");
        assertProblem(Api.as(bearer).delete("/orders/1"), 405, "METHOD_NOT_ALLOWED");
        assertProblem(Api.as(bearer).get("/orders/not-a-number"), 404, "NOT_FOUND");
    }

    private static RequestSpecification validOrder(RequestSpecification request) {
        return request.contentType("application/json").body("{" + VALID_SN + ",\"amount\":100,\"currency\":\"EUR\"}");
    }

    private static Arguments body(String description, String body, int status, String code) {
        return Arguments.of(description, body, status, code);
    }

    private static void assertProblem(Response response, int status, String code) {
        assertEquals(status, response.statusCode(), response.asString());
        assertEquals("application/problem+json", response.contentType());
        assertEquals(code, response.jsonPath().getString("code"));
        String body = response.asString();
        assertFalse(body.contains("Exception") || body.contains("at io.") || body.contains("SQL"), body);
    }
}
