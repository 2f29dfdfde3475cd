package io.payonce.api;

import io.payonce.errors.Problem;
import io.payonce.processor.WebhookSender;
import io.payonce.support.Api;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Tokens;
import io.payonce.support.Webhooks;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import io.restassured.specification.RequestSpecification;
import io.smallrye.jwt.build.Jwt;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.charset.Charset;
import java.security.KeyPairGenerator;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Hostile requests against every money endpoint. Each one would move money if it got through; each
 * must be a documented 4xx problem with its code, write no business row, and never be a 500.
 */
@QuarkusTest
@ExtendWith(LedgerInvariants.class)
class HostileInputTest {

    private final Database db = Database.forTests();

    /** What each request is sent against: a funded user with an unpaid and a paid order, and a stranger. */
    record Scene(String user, String bearer, String ops, long unpaidOrder, long paidOrder, long payment, String stranger) {

        RequestSpecification deposit(String key) {
            return Api.as(ops).header("Idempotency-Key", key).contentType("application/json");
        }

        String depositPath() {
            return "/accounts/" + user + "/deposits";
        }

        RequestSpecification refund() {
            return Api.as(ops).header("Idempotency-Key", Api.newKey()).contentType("application/json");
        }

        String refundPath() {
            return "/orders/" + paidOrder + "/refunds";
        }

        Response settle(String body) {
            return Api.as(ops).header("Idempotency-Key", Api.newKey()).contentType("application/json").body(body)
                    .post("/payments/" + payment + "/settlement");
        }
    }

    static Stream<Arguments> hostileRequests() {
        return Stream.of(
                hostile("key: quoted empty", s -> s.deposit("\"\"").body(amount("100")).post(s.depositPath()), 400, "IDEMPOTENCY_KEY_INVALID"),
                hostile("key: 65 characters", s -> s.deposit("k".repeat(65)).body(amount("100")).post(s.depositPath()), 400, "IDEMPOTENCY_KEY_INVALID"),
                hostile("key: not ASCII", s -> s.deposit("clé-ünïcode").body(amount("100")).post(s.depositPath()), 400, "IDEMPOTENCY_KEY_INVALID"),
                hostile("key: control character", s -> s.deposit("tab\there").body(amount("100")).post(s.depositPath()), 400, "IDEMPOTENCY_KEY_INVALID"),
                hostile("key: padded inside quotes", s -> s.deposit("\" padded \"").body(amount("100")).post(s.depositPath()), 400, "IDEMPOTENCY_KEY_INVALID"),
                hostile("key: SQL text", s -> s.deposit("x'; DROP TABLE account; --").body(amount("100")).post(s.depositPath()), 400, "IDEMPOTENCY_KEY_INVALID"),
                hostile("key: missing on pay", s -> Api.as(s.bearer).post("/orders/" + s.unpaidOrder + "/pay"), 400, "IDEMPOTENCY_KEY_MISSING"),
                hostile("key: malformed on a transition", s -> Api.as(s.ops).header("Idempotency-Key", "k".repeat(70))
                        .post("/orders/" + s.paidOrder + "/ship"), 400, "IDEMPOTENCY_KEY_INVALID"),
                hostile("amount: zero", s -> s.deposit(Api.newKey()).body(amount("0")).post(s.depositPath()), 400, "VALIDATION_FAILED"),
                hostile("amount: negative", s -> s.deposit(Api.newKey()).body(amount("-500")).post(s.depositPath()), 400, "VALIDATION_FAILED"),
                hostile("amount: above the maximum", s -> s.deposit(Api.newKey()).body(amount("100000001")).post(s.depositPath()), 400, "VALIDATION_FAILED"),
                hostile("amount: beyond 64 bits", s -> s.deposit(Api.newKey()).body(amount("18446744073709551617")).post(s.depositPath()), 400, "MALFORMED_REQUEST"),
                hostile("amount: decimals", s -> s.deposit(Api.newKey()).body(amount("100.5")).post(s.depositPath()), 400, "MALFORMED_REQUEST"),
                hostile("amount: exponent", s -> s.deposit(Api.newKey()).body(amount("1e9")).post(s.depositPath()), 400, "MALFORMED_REQUEST"),
                hostile("amount: a string", s -> s.deposit(Api.newKey()).body(amount("\"100\"")).post(s.depositPath()), 400, "MALFORMED_REQUEST"),
                hostile("amount: negative refund", s -> s.refund().body("{\"refundNo\":\"r-1\",\"amount\":-1}").post(s.refundPath()), 400, "VALIDATION_FAILED"),
                hostile("refund: number with SQL", s -> s.refund().body("{\"refundNo\":\"1 OR 1=1\",\"amount\":1}").post(s.refundPath()), 400, "VALIDATION_FAILED"),
                hostile("refund: number missing", s -> s.refund().body("{\"amount\":1}").post(s.refundPath()), 400, "VALIDATION_FAILED"),
                hostile("JSON: duplicate field", s -> s.deposit(Api.newKey()).body("{\"amount\":1,\"amount\":99999,\"currency\":\"EUR\",\"reference\":\"d-1\"}")
                        .post(s.depositPath()), 400, "MALFORMED_REQUEST"),
                hostile("JSON: truncated", s -> s.deposit(Api.newKey()).body("{\"amount\":100,\"curr").post(s.depositPath()), 400, "MALFORMED_REQUEST"),
                hostile("JSON: 5,000 levels deep", s -> s.deposit(Api.newKey()).body("{\"amount\":" + "[".repeat(5000) + "]".repeat(5000) + "}")
                        .post(s.depositPath()), 400, "MALFORMED_REQUEST"),
                hostile("JSON: 1 MB body", s -> s.deposit(Api.newKey()).body("{\"currency\":\"" + "E".repeat(1 << 20) + "\"}")
                        .post(s.depositPath()), 413, "PAYLOAD_TOO_LARGE"),
                hostile("JSON: unknown field", s -> s.deposit(Api.newKey()).body("{\"amount\":100,\"currency\":\"EUR\",\"reference\":\"d-1\",\"balance\":1}")
                        .post(s.depositPath()), 400, "MALFORMED_REQUEST"),
                hostile("content type: form", s -> Api.as(s.ops).header("Idempotency-Key", Api.newKey()).contentType("application/x-www-form-urlencoded")
                        .body("amount=100&currency=EUR").post(s.depositPath()), 415, "UNSUPPORTED_MEDIA_TYPE"),
                hostile("header: 20 KB", s -> s.deposit(Api.newKey()).header("X-Filler", "f".repeat(20_000)).body(amount("100"))
                        .post(s.depositPath()), 431, "HEADERS_TOO_LARGE"),
                hostile("JWT: missing", s -> RestAssured.given().header("Idempotency-Key", Api.newKey())
                        .post("/orders/" + s.unpaidOrder + "/pay"), 401, "UNAUTHENTICATED"),
                hostile("JWT: expired", s -> Api.as(Tokens.expired(s.user)).header("Idempotency-Key", Api.newKey())
                        .post("/orders/" + s.unpaidOrder + "/pay"), 401, "UNAUTHENTICATED"),
                hostile("JWT: forged ops token", s -> Api.as(forged()).header("Idempotency-Key", Api.newKey()).contentType("application/json")
                        .body(amount("100")).post(s.depositPath()), 401, "UNAUTHENTICATED"),
                hostile("JWT: a user calling an ops endpoint", s -> Api.as(s.bearer).header("Idempotency-Key", Api.newKey())
                        .contentType("application/json").body(amount("100")).post(s.depositPath()), 403, "FORBIDDEN"),
                hostile("another user's order: pay", s -> Api.pay(Tokens.user(s.stranger), s.unpaidOrder, Api.newKey()), 404, "ORDER_NOT_FOUND"),
                hostile("a user refunding their own order", s -> Api.refund(s.bearer, s.paidOrder, Api.newKey(), "r-9", 1), 403, "FORBIDDEN"),
                hostile("staff who are also users paying a customer's order", s -> Api.pay(Tokens.userAndOps(s.stranger), s.unpaidOrder,
                        Api.newKey()), 404, "ORDER_NOT_FOUND"),
                hostile("pay: a body naming an amount", s -> payWithBody(s, "{\"method\":\"card\",\"cardToken\":\"tok_visa\",\"amount\":1}"),
                        400, "MALFORMED_REQUEST"),
                hostile("pay: an empty JSON object", s -> payWithBody(s, "{}"), 400, "VALIDATION_FAILED"),
                hostile("pay: JSON null", s -> payWithBody(s, "null"), 400, "MALFORMED_REQUEST"),
                hostile("pay: an unknown method", s -> payWithBody(s, "{\"method\":\"crypto\"}"), 400, "MALFORMED_REQUEST"),
                hostile("pay: a card without its token", s -> payWithBody(s, "{\"method\":\"card\"}"), 400, "VALIDATION_FAILED"),
                hostile("pay: a balance pay naming a card", s -> payWithBody(s, "{\"method\":\"balance\",\"cardToken\":\"tok_visa\"}"),
                        400, "VALIDATION_FAILED"),
                hostile("pay: a card token of 65 characters", s -> payWithBody(s, "{\"method\":\"card\",\"cardToken\":\"" + "t".repeat(65) + "\"}"),
                        400, "VALIDATION_FAILED"),
                hostile("pay: a card token with a quote", s -> payWithBody(s, "{\"method\":\"card\",\"cardToken\":\"tok\\\"x\"}"),
                        400, "VALIDATION_FAILED"),
                hostile("payment: one that does not exist", s -> Api.as(s.bearer).get("/payments/" + Long.MAX_VALUE), 404,
                        "PAYMENT_NOT_FOUND"),
                hostile("payment: id beyond 64 bits", s -> Api.as(s.bearer).get("/payments/99999999999999999999"), 404, "NOT_FOUND"),
                hostile("deposit: reference missing", s -> s.deposit(Api.newKey()).body("{\"amount\":100,\"currency\":\"EUR\"}")
                        .post(s.depositPath()), 400, "VALIDATION_FAILED"),
                hostile("another user's order: cancel", s -> Api.transition(Tokens.user(s.stranger), s.unpaidOrder, "cancel"), 404, "ORDER_NOT_FOUND"),
                hostile("another user's account: read", s -> Api.as(Tokens.user(s.stranger)).get("/accounts/" + s.user), 404, "ACCOUNT_NOT_FOUND"),
                hostile("order id beyond 64 bits", s -> Api.as(s.bearer).header("Idempotency-Key", Api.newKey())
                        .post("/orders/99999999999999999999/pay"), 404, "NOT_FOUND"),
                hostile("coupon: activity not ASCII", s -> Api.as(s.bearer).post("/coupons/fête/grants"), 400, "VALIDATION_FAILED"),
                hostile("route: unknown", s -> Api.as(s.bearer).post("/orders/" + s.unpaidOrder + "/pay-twice"), 404, "NOT_FOUND"),
                hostile("method: DELETE an account", s -> Api.as(s.ops).delete("/accounts/" + s.user), 405, "METHOD_NOT_ALLOWED"),
                hostile("method: PUT a payment", s -> Api.as(s.bearer).put("/orders/" + s.unpaidOrder + "/pay"), 405, "METHOD_NOT_ALLOWED"),
                hostile("settlement: an unknown outcome", s -> s.settle("{\"outcome\":\"refunded\",\"reason\":\"r\"}"), 400, "MALFORMED_REQUEST"),
                hostile("settlement: charged without a charge", s -> s.settle("{\"outcome\":\"charged\",\"reason\":\"r\"}"), 400,
                        "VALIDATION_FAILED"),
                hostile("settlement: not charged naming a charge", s -> s.settle("{\"outcome\":\"not_charged\",\"chargeId\":\"ch_1\",\"reason\":\"r\"}"),
                        400, "VALIDATION_FAILED"),
                hostile("settlement: a charge id that leaves the processor's path", s -> s.settle("{\"outcome\":\"charged\",\"chargeId\":\"..\","
                        + "\"reason\":\"r\"}"), 400, "VALIDATION_FAILED"),
                hostile("settlement: no reason", s -> s.settle("{\"outcome\":\"not_charged\"}"), 400, "VALIDATION_FAILED"),
                hostile("settlement: a blank reason", s -> s.settle("{\"outcome\":\"not_charged\",\"reason\":\"   \"}"), 400, "VALIDATION_FAILED"),
                hostile("settlement: a reason of 501 characters", s -> s.settle("{\"outcome\":\"not_charged\",\"reason\":\"" + "r".repeat(501) + "\"}"),
                        400, "VALIDATION_FAILED"),
                hostile("settlement: a reason not in ASCII", s -> s.settle("{\"outcome\":\"not_charged\",\"reason\":\"déjà débité\"}"), 400,
                        "VALIDATION_FAILED"),
                hostile("settlement: a reason with a line break", s -> s.settle("{\"outcome\":\"not_charged\",\"reason\":\"a\\nb\"}"), 400,
                        "VALIDATION_FAILED"),
                hostile("settlement: by the payment's owner", s -> Api.as(s.bearer).header("Idempotency-Key", Api.newKey()).contentType("application/json")
                        .body("{\"outcome\":\"not_charged\",\"reason\":\"r\"}").post("/payments/" + s.payment + "/settlement"), 403, "FORBIDDEN"));
    }

    /**
     * Deliveries to the processor's webhook, the one public write: each would settle a payment, or
     * fill the inbox, if it got through. Unsigned, signed by someone else, signed long ago, or signed
     * by the processor but unreadable as an event: a 4xx problem, nothing recorded.
     */
    static Stream<Arguments> hostileWebhooks() {
        String event = Webhooks.event("evt_hostile", "charge.succeeded", charge("succeeded", 100));
        long now = System.currentTimeMillis() / 1000;
        return Stream.of(
                hostile("webhook: no signature", s -> RestAssured.given().contentType("application/json").body(event).post(Webhooks.PATH),
                        400, "WEBHOOK_SIGNATURE_INVALID"),
                hostile("webhook: signed with another secret", s -> Webhooks.deliver(event, WebhookSender.signature("whsec_not_payonces_secret", now,
                        event)), 400, "WEBHOOK_SIGNATURE_INVALID"),
                hostile("webhook: signed an hour ago", s -> Webhooks.deliver(event, WebhookSender.signature(Webhooks.secret(), now - 3600, event)),
                        400, "WEBHOOK_SIGNATURE_INVALID"),
                hostile("webhook: a signature of another body", s -> Webhooks.deliver(event.replace("100", "1"),
                        WebhookSender.signature(Webhooks.secret(), now, event)), 400, "WEBHOOK_SIGNATURE_INVALID"),
                hostile("webhook: a signature header of garbage", s -> Webhooks.deliver(event, "t=now,v1=" + "z".repeat(64)), 400,
                        "WEBHOOK_SIGNATURE_INVALID"),
                hostile("webhook: signed, no body", s -> RestAssured.given().contentType("application/json")
                        .header(WebhookSender.HEADER, WebhookSender.signature(Webhooks.secret(), now, "")).post(Webhooks.PATH), 400,
                        "MALFORMED_REQUEST"),
                hostile("webhook: signed, not JSON", s -> Webhooks.deliver("{\"id\":\"evt_1\",\"typ"), 400, "MALFORMED_REQUEST"),
                hostile("webhook: signed, 5,000 levels deep", s -> Webhooks.deliver("{\"id\":" + "[".repeat(5000) + "]".repeat(5000) + "}"),
                        400, "MALFORMED_REQUEST"),
                hostile("webhook: signed, an event id with SQL", s -> Webhooks.deliver(Webhooks.event("evt' OR '1'='1", "charge.succeeded",
                        charge("succeeded", 100))), 400, "MALFORMED_REQUEST"),
                hostile("webhook: signed, an event id as a number", s -> Webhooks.deliver(event.replace("\"evt_hostile\"", "12345")), 400,
                        "MALFORMED_REQUEST"),
                hostile("webhook: signed, no object", s -> Webhooks.deliver("{\"id\":\"evt_2\",\"type\":\"charge.succeeded\",\"data\":{}}"),
                        400, "MALFORMED_REQUEST"),
                hostile("webhook: signed, a charge.succeeded whose charge failed", s -> Webhooks.deliver(Webhooks.event("evt_3", "charge.succeeded",
                        charge("failed", 100))), 400, "MALFORMED_REQUEST"),
                hostile("webhook: signed, a charge still pending", s -> Webhooks.deliver(Webhooks.event("evt_4", "charge.succeeded",
                        charge("pending", 100))), 400, "MALFORMED_REQUEST"),
                hostile("webhook: signed, an amount in text", s -> Webhooks.deliver(Webhooks.event("evt_5", "charge.succeeded",
                        charge("succeeded", 100).put("amount", "100"))), 400, "MALFORMED_REQUEST"),
                hostile("webhook: 1 MB body", s -> Webhooks.deliver("{\"id\":\"" + "e".repeat(1 << 20) + "\"}"), 413, "PAYLOAD_TOO_LARGE"),
                hostile("webhook: a form", s -> RestAssured.given().contentType("application/x-www-form-urlencoded")
                        .header(WebhookSender.HEADER, WebhookSender.signature(Webhooks.secret(), now, "id=evt_6")).body("id=evt_6")
                        .post(Webhooks.PATH), 415, "UNSUPPORTED_MEDIA_TYPE"),
                hostile("webhook: a path beneath it", s -> RestAssured.given().contentType("application/json")
                        .header(WebhookSender.HEADER, WebhookSender.signature(Webhooks.secret(), now, event)).body(event)
                        .post(Webhooks.PATH + "/x"), 404, "NOT_FOUND"),
                hostile("webhook: GET", s -> RestAssured.given().get(Webhooks.PATH), 405, "METHOD_NOT_ALLOWED"));
    }

    /** A processor's charge object under a key no payment was made under. */
    private static JsonObject charge(String status, long amount) {
        return new JsonObject().put("id", "ch_hostile").put("object", "charge").put("amount", amount).put("currency", "eur")
                .put("status", status).put("reference", "order-1").put("idempotency_key", "po_hostile");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("hostileWebhooks")
    void aWebhookThatIsNotTheProcessorsOrNotAnEventIsRefusedAndRecordsNothing(String description, Function<Scene, Response> request,
                                                                              int status, String code) {
        isRefusedWithItsCodeAndMovesNoMoney(description, request, status, code);
    }

    /**
     * Every encoding the JSON reader recognises by a body's first bytes, on a pay and on a deposit: a
     * Unicode encoding JSON allows is read, and the invalid request is refused for what it says; UCS-4
     * in an unusual byte order ({@code 00 00 7B 00}, {@code 00 7B 00 00}) is a malformed body, never a 500.
     */
    static Stream<Arguments> encodedBodies() {
        String pay = "{\"method\":\"card\"}";
        String deposit = "{\"amount\":0,\"currency\":\"EUR\",\"reference\":\"d-1\"}";
        return Stream.of(
                hostile("pay: UTF-8", s -> payWithBody(s, encoded(pay, "UTF-8")), 400, "VALIDATION_FAILED"),
                hostile("pay: UTF-16BE", s -> payWithBody(s, encoded(pay, "UTF-16BE")), 400, "VALIDATION_FAILED"),
                hostile("pay: UTF-16LE", s -> payWithBody(s, encoded(pay, "UTF-16LE")), 400, "VALIDATION_FAILED"),
                hostile("pay: UTF-32BE", s -> payWithBody(s, encoded(pay, "UTF-32BE")), 400, "VALIDATION_FAILED"),
                hostile("pay: UTF-32LE", s -> payWithBody(s, encoded(pay, "UTF-32LE")), 400, "VALIDATION_FAILED"),
                hostile("pay: UCS-4 in order 2143", s -> payWithBody(s, ucs4(pay, 1, 0, 3, 2)), 400, "MALFORMED_REQUEST"),
                hostile("pay: UCS-4 in order 3412", s -> payWithBody(s, ucs4(pay, 2, 3, 0, 1)), 400, "MALFORMED_REQUEST"),
                hostile("pay: UTF-32BE with a character beyond Unicode", s -> payWithBody(s, beyondUnicode(pay)), 400, "MALFORMED_REQUEST"),
                hostile("deposit: UTF-8", s -> s.deposit(Api.newKey()).body(encoded(deposit, "UTF-8")).post(s.depositPath()), 400,
                        "VALIDATION_FAILED"),
                hostile("deposit: UTF-16BE", s -> s.deposit(Api.newKey()).body(encoded(deposit, "UTF-16BE")).post(s.depositPath()), 400,
                        "VALIDATION_FAILED"),
                hostile("deposit: UTF-16LE", s -> s.deposit(Api.newKey()).body(encoded(deposit, "UTF-16LE")).post(s.depositPath()), 400,
                        "VALIDATION_FAILED"),
                hostile("deposit: UTF-32BE", s -> s.deposit(Api.newKey()).body(encoded(deposit, "UTF-32BE")).post(s.depositPath()), 400,
                        "VALIDATION_FAILED"),
                hostile("deposit: UTF-32LE", s -> s.deposit(Api.newKey()).body(encoded(deposit, "UTF-32LE")).post(s.depositPath()), 400,
                        "VALIDATION_FAILED"),
                hostile("deposit: UCS-4 in order 2143", s -> s.deposit(Api.newKey()).body(ucs4(deposit, 1, 0, 3, 2)).post(s.depositPath()),
                        400, "MALFORMED_REQUEST"),
                hostile("deposit: UCS-4 in order 3412", s -> s.deposit(Api.newKey()).body(ucs4(deposit, 2, 3, 0, 1)).post(s.depositPath()),
                        400, "MALFORMED_REQUEST"));
    }

    /**
     * A number or a boolean where text belongs, on every money body: had it been turned into text
     * ({@code 1} into the second payment method, {@code 7} into refund number "7"), each would have
     * paid, deposited or refunded.
     */
    static Stream<Arguments> scalarsWhereTextBelongs() {
        return Stream.of(
                hostile("pay: a method by its position", s -> payWithBody(s, "{\"method\":1,\"cardToken\":\"tok_visa\"}"), 400, "MALFORMED_REQUEST"),
                hostile("pay: a method by its position in text", s -> payWithBody(s, "{\"method\":\"1\",\"cardToken\":\"tok_visa\"}"),
                        400, "MALFORMED_REQUEST"),
                hostile("pay: a method as a decimal", s -> payWithBody(s, "{\"method\":1.0,\"cardToken\":\"tok_visa\"}"), 400, "MALFORMED_REQUEST"),
                hostile("pay: a method as a boolean", s -> payWithBody(s, "{\"method\":false}"), 400, "MALFORMED_REQUEST"),
                hostile("pay: a card token as a number", s -> payWithBody(s, "{\"method\":\"card\",\"cardToken\":4242}"), 400, "MALFORMED_REQUEST"),
                hostile("pay: a card token as a boolean", s -> payWithBody(s, "{\"method\":\"card\",\"cardToken\":true}"), 400, "MALFORMED_REQUEST"),
                hostile("deposit: a reference as a number", s -> s.deposit(Api.newKey())
                        .body("{\"amount\":100,\"currency\":\"EUR\",\"reference\":" + System.nanoTime() + "}").post(s.depositPath()),
                        400, "MALFORMED_REQUEST"),
                hostile("deposit: a reference as a decimal", s -> s.deposit(Api.newKey())
                        .body("{\"amount\":100,\"currency\":\"EUR\",\"reference\":" + System.nanoTime() + ".5}").post(s.depositPath()),
                        400, "MALFORMED_REQUEST"),
                hostile("deposit: a reference as a boolean", s -> s.deposit(Api.newKey())
                        .body("{\"amount\":100,\"currency\":\"EUR\",\"reference\":true}").post(s.depositPath()), 400, "MALFORMED_REQUEST"),
                hostile("refund: a number as a number", s -> s.refund().body("{\"refundNo\":" + System.nanoTime() + ",\"amount\":1}")
                        .post(s.refundPath()), 400, "MALFORMED_REQUEST"));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("scalarsWhereTextBelongs")
    void aNumberOrABooleanWhereTextBelongsIsRefusedNotTurnedIntoText(String description, Function<Scene, Response> request, int status,
                                                                     String code) {
        isRefusedWithItsCodeAndMovesNoMoney(description, request, status, code);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("encodedBodies")
    void aBodyInAnyEncodingIsReadOrRefusedWithItsCode(String description, Function<Scene, Response> request, int status, String code) {
        isRefusedWithItsCodeAndMovesNoMoney(description, request, status, code);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("hostileRequests")
    void isRefusedWithItsCodeAndMovesNoMoney(String description, Function<Scene, Response> request, int status, String code) {
        Scene scene = scene();
        long rowsBefore = businessRows(scene);

        Response response = request.apply(scene);

        assertEquals(status, response.statusCode(), description + ": " + response.asString());
        assertEquals(Problem.MEDIA_TYPE, response.contentType(), description);
        assertEquals(code, response.jsonPath().getString("code"), description);
        String body = response.asString();
        assertFalse(body.contains("Exception") || body.contains("\tat ") || body.contains("SQL"), body);
        assertEquals(rowsBefore, businessRows(scene), description + " wrote nothing");
        assertEquals(1_000, db.balance(scene.user), description + " moved no money");
        assertEquals("UNPAID", db.orderStatus(scene.unpaidOrder), description + " paid nothing");
    }

    /**
     * One scene for all the cases, made once (a funded account, two orders, a payment: a dozen calls):
     * each case must leave it exactly as it found it, and checks that it did.
     */
    private static Scene shared;

    private Scene scene() {
        if (shared == null) {
            shared = newScene();
        }
        return shared;
    }

    private static Scene newScene() {
        Buyer buyer = Buyer.withBalance(2_000);
        long unpaid = buyer.newOrder(400);
        long paid = buyer.newOrder(1_000);
        Response payment = Api.pay(buyer.bearer(), paid, Api.newKey());
        assertEquals(201, payment.statusCode());
        return new Scene(buyer.userId(), buyer.bearer(), Tokens.ops(), unpaid, paid, payment.jsonPath().getLong("paymentId"), Tokens.newUserId());
    }

    private long businessRows(Scene scene) {
        return db.rowsOwnedBy(scene.user) + db.rowsOwnedBy(scene.stranger)
                + db.count("SELECT COUNT(*) FROM pay_record WHERE user_id IN (?, ?)", scene.user, scene.stranger)
                + db.count("SELECT COUNT(*) FROM refund_record WHERE user_id IN (?, ?)", scene.user, scene.stranger)
                + db.count("SELECT COUNT(*) FROM coupon_grant WHERE user_id IN (?, ?)", scene.user, scene.stranger)
                + db.count("SELECT COUNT(*) FROM operator_settlement WHERE payment_id = ?", scene.payment)
                + db.count("SELECT COUNT(*) FROM processor_event");
    }

    private static Response payWithBody(Scene scene, String body) {
        return Api.as(scene.bearer).header("Idempotency-Key", Api.newKey()).contentType("application/json").body(body)
                .post("/orders/" + scene.unpaidOrder + "/pay");
    }

    private static Response payWithBody(Scene scene, byte[] body) {
        return Api.as(scene.bearer).header("Idempotency-Key", Api.newKey()).contentType("application/json").body(body)
                .post("/orders/" + scene.unpaidOrder + "/pay");
    }

    private static byte[] encoded(String json, String charset) {
        return json.getBytes(Charset.forName(charset));
    }

    /** The body in UTF-32BE with each four bytes rearranged: {@code order[i]} is the big-endian byte written i-th. */
    private static byte[] ucs4(String json, int... order) {
        byte[] bigEndian = encoded(json, "UTF-32BE");
        byte[] rearranged = new byte[bigEndian.length];
        for (int unit = 0; unit < bigEndian.length; unit += 4) {
            for (int i = 0; i < 4; i++) {
                rearranged[unit + i] = bigEndian[unit + order[i]];
            }
        }
        return rearranged;
    }

    /** UTF-32BE whose second character is 0x7FFFFFFF, past the last code point. */
    private static byte[] beyondUnicode(String json) {
        byte[] body = encoded(json, "UTF-32BE");
        body[4] = 0x7F;
        body[5] = (byte) 0xFF;
        body[6] = (byte) 0xFF;
        body[7] = (byte) 0xFF;
        return body;
    }

    private static String amount(String value) {
        return "{\"amount\":" + value + ",\"currency\":\"EUR\",\"reference\":\"" + Api.newKey() + "\"}";
    }

    private static String forged() {
        try {
            var generator = KeyPairGenerator.getInstance("RSA");
            generator.initialize(2048);
            return Jwt.issuer(Tokens.ISSUER).subject("mallory").groups(Set.of("user", "ops")).sign(generator.generateKeyPair().getPrivate());
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    private static Arguments hostile(String description, Function<Scene, Response> request, int status, String code) {
        return Arguments.of(description, request, status, code);
    }
}
