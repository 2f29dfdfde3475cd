package io.payonce.api;

import io.payonce.input.Identifiers;
import io.payonce.support.Api;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.Map;
import java.util.UUID;
import java.util.function.Function;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every identifier at its maximum length, at every keyed endpoint: a 64-character user id shaped
 * like an e-mail address, 64-character order, refund and activity numbers and deposit references,
 * and a 64-character Idempotency-Key sent quoted (66 header characters, the longest legal header)
 * and then bare. Each request answers its success status, never a 500, and its repeat replays it.
 */
@QuarkusTest
@ExtendWith(LedgerInvariants.class)
class MaximumLengthTest {

    private static final int MAX_LENGTH = 64;

    private final Database db = Database.forTests();

    @Test
    void theLongestUsersAccountTakesADepositUnderTheLongestKeyAndReference() {
        String user = longestUserId();
        String ops = Tokens.ops();
        String reference = longestNumber("ref-");
        Response opened = Api.as(ops).contentType(ContentType.JSON).body(Map.of("userId", user, "currency", "EUR")).post("/accounts");
        assertEquals(201, opened.statusCode(), opened.asString());

        Response deposited = answersThenReplays(201, longestKey(), key -> Api.deposit(ops, user, key, 2_500, reference));

        assertEquals(user, deposited.jsonPath().getString("userId"));
        assertEquals(2_500, deposited.jsonPath().getLong("balance"));
        assertEquals(2_500, db.balance(user));
        assertEquals(1, db.count("SELECT COUNT(*) FROM account_entry WHERE user_id = ? AND ref_type = 'DEPOSIT' AND ref_id = ?",
                user, reference));
        assertEquals(1, db.count("SELECT COUNT(*) FROM idempotency_record WHERE target = ?", "account:" + user),
                "the key's record names the 64-character account it acts on");
    }

    @Test
    void theLongestUserCreatesAnOrderWithTheLongestNumberUnderTheLongestKey() {
        String user = longestUserId();
        String bearer = Tokens.user(user);
        String orderSn = longestNumber("sn-");
        String key = longestKey();

        Response created = answersThenReplays(201, key, header -> createWithKey(bearer, header, orderSn));

        long id = created.jsonPath().getLong("id");
        assertEquals(user, created.jsonPath().getString("userId"));
        assertEquals(orderSn, created.jsonPath().getString("orderSn"));
        assertEquals(1, db.count("SELECT COUNT(*) FROM orders WHERE id = ? AND user_id = ? AND order_sn = ?", id, user, orderSn));
        assertEquals(1, db.count("SELECT COUNT(*) FROM idempotency_record WHERE scope = ? AND idem_key = ?", user, key));
    }

    @Test
    void theLongestUserCreatesAnOrderWithTheLongestNumberWithASubmitToken() {
        String user = longestUserId();
        String bearer = Tokens.user(user);
        String orderSn = longestNumber("sn-");
        String token = Api.submitToken(bearer);

        Response first = Api.createOrder(bearer, token, orderSn, 900);
        Response again = Api.createOrder(bearer, token, orderSn, 900);

        assertReplayed(201, first, again);
        long id = first.jsonPath().getLong("id");
        assertEquals(1, db.count("SELECT COUNT(*) FROM orders WHERE id = ? AND user_id = ? AND order_sn = ?", id, user, orderSn));
    }

    @Test
    void theLongestUserPaysUnderTheLongestKey() {
        Buyer buyer = Buyer.named(longestUserId(), 5_000);
        long order = buyer.newOrder(1_200);
        String key = longestKey();

        Response paid = answersThenReplays(201, key, header -> Api.pay(buyer.bearer(), order, header));

        assertEquals(order, paid.jsonPath().getLong("orderId"));
        assertEquals(key, db.string("SELECT idem_key FROM pay_record WHERE order_id = ?", order), "the payment records the key unquoted");
        assertEquals("PAID", db.orderStatus(order));
        assertEquals(3_800, db.balance(buyer.userId()));
    }

    @Test
    void theLongestUsersOrderIsRefundedUnderTheLongestRefundNumberAndKey() {
        Buyer buyer = Buyer.named(longestUserId(), 2_000);
        long order = buyer.paidOrder(800);
        String ops = Tokens.ops();
        String refundNo = longestNumber("r-");

        Response refunded = answersThenReplays(201, longestKey(), key -> Api.refund(ops, order, key, refundNo, 800));

        assertEquals(refundNo, refunded.jsonPath().getString("refundNo"));
        assertEquals(1, db.count("SELECT COUNT(*) FROM refund_record WHERE order_id = ? AND refund_no = ? AND user_id = ?",
                order, refundNo, buyer.userId()));
        assertEquals("REFUNDED", db.orderStatus(order));
        assertEquals(2_000, db.balance(buyer.userId()));
    }

    @Test
    void theLongestUsersOrdersAreShippedCompletedAndCancelledUnderTheLongestKeys() {
        Buyer buyer = Buyer.named(longestUserId(), 2_000);
        long delivered = buyer.paidOrder(700);
        long abandoned = buyer.newOrder(300);
        String ops = Tokens.ops();

        Response shipped = answersThenReplays(200, longestKey(), key -> transition(ops, delivered, "ship", key));
        Response completed = answersThenReplays(200, longestKey(), key -> transition(ops, delivered, "complete", key));
        Response cancelled = answersThenReplays(200, longestKey(), key -> transition(ops, abandoned, "cancel", key));

        assertEquals("SHIPPED", shipped.jsonPath().getString("status"));
        assertEquals("COMPLETED", completed.jsonPath().getString("status"));
        assertEquals("CLOSED", cancelled.jsonPath().getString("status"));
        assertEquals("COMPLETED", db.orderStatus(delivered));
        assertEquals("CLOSED", db.orderStatus(abandoned));
    }

    @Test
    void theLongestUserIsGrantedTheCouponOfTheLongestActivityOnce() {
        String user = longestUserId();
        String bearer = Tokens.user(user);
        String activity = longestNumber("act-");

        Response granted = Api.as(bearer).post("/coupons/{activityId}/grants", activity);
        Response again = Api.as(bearer).post("/coupons/{activityId}/grants", activity);

        assertEquals(201, granted.statusCode(), granted.asString());
        assertNull(granted.header("Idempotent-Replayed"));
        assertEquals(201, again.statusCode(), again.asString());
        assertEquals("true", again.header("Idempotent-Replayed"));
        assertEquals(granted.asString(), again.asString());
        assertEquals(activity, granted.jsonPath().getString("activityId"));
        assertEquals(1, db.count("SELECT COUNT(*) FROM coupon_grant WHERE user_id = ? AND activity_id = ?", user, activity));
    }

    /**
     * Sends the request with {@code key} in its quoted form, 66 header characters, then again bare:
     * both forms are the same key, so the second answer replays the first.
     */
    private static Response answersThenReplays(int status, String key, Function<String, Response> send) {
        String quoted = "\"" + key + "\"";
        assertEquals(MAX_LENGTH + 2, quoted.length());
        Response first = send.apply(quoted);
        Response repeat = send.apply(key);
        assertReplayed(status, first, repeat);
        return first;
    }

    private static void assertReplayed(int status, Response first, Response repeat) {
        assertEquals(status, first.statusCode(), first.asString());
        assertNull(first.header("Idempotent-Replayed"), "the first answer is not a replay");
        assertEquals(status, repeat.statusCode(), repeat.asString());
        assertEquals("true", repeat.header("Idempotent-Replayed"));
        assertEquals(first.asString(), repeat.asString());
    }

    private static Response createWithKey(String bearer, String key, String orderSn) {
        return Api.as(bearer).header("Idempotency-Key", key).contentType(ContentType.JSON)
                .body(Map.of("orderSn", orderSn, "amount", 900, "currency", "EUR")).post("/orders");
    }

    private static Response transition(String bearer, long orderId, String action, String key) {
        return Api.as(bearer).header("Idempotency-Key", key).post("/orders/" + orderId + "/" + action);
    }

    /** Shaped like an e-mail address: letters, digits, '-', '.', '_' and '@'. */
    private static String longestUserId() {
        String userId = longest("u-", "._-", "@mail.example.com");
        assertTrue(userId.matches(Identifiers.USER_ID), userId);
        return userId;
    }

    /** An order, refund or activity number, or a deposit reference, using every punctuation mark such numbers allow. */
    private static String longestNumber(String prefix) {
        String number = longest(prefix, ".:_-", "");
        assertTrue(number.matches(Identifiers.BUSINESS_NUMBER), number);
        return number;
    }

    /** Visible ASCII beyond letters and digits, as an Idempotency-Key may hold. */
    private static String longestKey() {
        return longest("k-", "!#$%&'*+.^_`|~", "");
    }

    /** {@code prefix}, 32 random hex digits, {@code filler} repeated and {@code suffix}: 64 characters, unique to this run. */
    private static String longest(String prefix, String filler, String suffix) {
        String unique = prefix + UUID.randomUUID().toString().replace("-", "");
        int padding = MAX_LENGTH - unique.length() - suffix.length();
        String value = unique + filler.repeat(padding).substring(0, padding) + suffix;
        assertEquals(MAX_LENGTH, value.length());
        return value;
    }
}
