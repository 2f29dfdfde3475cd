package io.payonce.coupon;

import io.payonce.support.Api;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.Replays;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

@QuarkusTest
class CouponTest {

    private final Database db = Database.forTests();

    @Test
    void aUserGetsOneCouponPerActivityHoweverOftenTheyAsk() throws Exception {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);

        List<Response> answers = Concurrently.run(10, () -> Api.as(bearer).post("/coupons/spring-sale/grants"));

        Response granted = answers.stream().filter(a -> !Replays.isRepeat(a)).findFirst().orElseThrow();
        assertEquals(201, granted.statusCode(), granted.asString());
        assertEquals(9, answers.stream().filter(Replays::isRepeat).count(), "every other request is told it repeats the grant");
        answers.forEach(a -> Replays.assertSameAnswer(granted, a));
        assertEquals(1, db.count("SELECT COUNT(*) FROM coupon_grant WHERE user_id = ?", user));
    }

    @Test
    void anotherActivityIsAnotherCoupon() {
        String bearer = Tokens.user(Tokens.newUserId());

        assertEquals(201, Api.as(bearer).post("/coupons/spring-sale/grants").statusCode());
        assertEquals(201, Api.as(bearer).post("/coupons/autumn-sale/grants").statusCode());
    }

    @Test
    void aMalformedActivityIsAValidationError() {
        Response response = Api.as(Tokens.user(Tokens.newUserId())).post("/coupons/" + "a".repeat(65) + "/grants");

        assertEquals(400, response.statusCode());
        assertEquals("VALIDATION_FAILED", response.jsonPath().getString("code"));
    }
}
