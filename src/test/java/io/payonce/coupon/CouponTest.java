package io.payonce.coupon;

import io.payonce.support.Api;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Database;
import io.payonce.support.LockWaits;
import io.payonce.support.Replays;
import io.payonce.support.RequestsInFlight;
import io.payonce.support.Tokens;
import io.payonce.support.UserLock;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
class CouponTest {

    private final Database db = Database.forTests();

    /**
     * The first grant's row stays uncommitted, stopped by a trigger of the test's just after its INSERT,
     * until another request's INSERT waits on the unique key (user, activity): that one is then told it
     * repeats the grant by the unique key itself, as a race between two instances would be. The gate
     * stays shut until the test lets go, and the waiting INSERT waits for the first's commit.
     */
    @Test
    void aUserGetsOneCouponPerActivityHoweverOftenTheyAsk() throws Exception {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);

        List<Response> answers;
        long waiting;
        int answeredMeanwhile;
        try (UserLock gate = UserLock.hold(db)) {
            db.update("CREATE TRIGGER test_grant_waits AFTER INSERT ON coupon_grant FOR EACH ROW IF NEW.user_id = '" + user
                    + "' THEN " + gate.waitStatement() + "; END IF");
            try (RequestsInFlight<Response> asked = RequestsInFlight.start(10, () -> Api.as(bearer).post("/coupons/spring-sale/grants"))) {
                gate.awaitWaiter(db);
                waiting = LockWaits.awaitWaiting(db, "coupon_grant", null, "INSERT INTO coupon_grant", 1);
                answeredMeanwhile = asked.answered();
                gate.release();
                answers = asked.answers();
            }
        } finally {
            // Once the gate's session has ended: a statement still at the gate would hold up the DROP.
            db.update("DROP TRIGGER IF EXISTS test_grant_waits");
        }

        assertTrue(waiting >= 1 && answeredMeanwhile == 0, "set-up: another grant waited on the first one's uncommitted row, "
                + "and none was answered before it committed: " + waiting + " waiting, " + answeredMeanwhile + " answered");
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
