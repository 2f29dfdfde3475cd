package io.payonce.order;

import io.payonce.support.Api;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.LockWaits;
import io.payonce.support.Replays;
import io.payonce.support.RequestsInFlight;
import io.payonce.support.Tokens;
import io.payonce.support.UserLock;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Its races hold the first move of an order until another waits on the row, and none of them gives up first. */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
@ExtendWith(LedgerInvariants.class)
class OrderTransitionTest {

    private final Database db = Database.forTests();

    private final String ops = Tokens.ops();

    @Test
    void theOwnerCancelsAnUnpaidOrderOnceAndARepeatIsANoOp() {
        String bearer = Tokens.user(Tokens.newUserId());
        long id = Api.newOrder(bearer, 500);

        Response first = Api.transition(bearer, id, "cancel");
        Response again = Api.transition(bearer, id, "cancel");

        assertMoved(first, "CLOSED", true);
        assertMoved(again, "CLOSED", false);
    }

    @Test
    void opsShipsAndCompletesAPaidOrderEachOnce() {
        long id = Api.newOrder(Tokens.user(Tokens.newUserId()), 500);
        markPaid(id);

        assertMoved(Api.transition(ops, id, "ship"), "SHIPPED", true);
        assertMoved(Api.transition(ops, id, "ship"), "SHIPPED", false);
        assertMoved(Api.transition(ops, id, "complete"), "COMPLETED", true);
        assertMoved(Api.transition(ops, id, "complete"), "COMPLETED", false);
        assertEquals("COMPLETED", db.orderStatus(id));
    }

    @Test
    void opsMayCancelAnyUnpaidOrder() {
        long id = Api.newOrder(Tokens.user(Tokens.newUserId()), 500);

        assertMoved(Api.transition(ops, id, "cancel"), "CLOSED", true);
    }

    @ParameterizedTest(name = "{1} on a {0} order is illegal")
    @CsvSource({
            "UNPAID, ship",
            "UNPAID, complete",
            "PAID, complete",
            "PAID, cancel",
            "SHIPPED, cancel",
            "COMPLETED, ship",
            "COMPLETED, cancel",
            "CLOSED, ship",
            "CLOSED, complete",
            "REFUNDED, ship",
            "REFUNDED, cancel",
    })
    void anIllegalTransitionIsAConflictNamingTheCurrentStatus(String status, String action) {
        long id = Api.newOrder(Tokens.user(Tokens.newUserId()), 500);
        db.update("UPDATE orders SET status = ? WHERE id = ?", status, id);

        Response response = Api.transition(ops, id, action);

        assertEquals(409, response.statusCode(), response.asString());
        assertEquals("ILLEGAL_TRANSITION", response.jsonPath().getString("code"));
        assertEquals(status, response.jsonPath().getString("currentStatus"));
        assertEquals(status, db.orderStatus(id), "an illegal transition changes nothing");
    }

    @Test
    void ofConcurrentShipRequestsExactlyOneMovesTheOrder() throws Exception {
        long id = Api.newOrder(Tokens.user(Tokens.newUserId()), 500);
        markPaid(id);

        List<Response> answers = whileTheFirstMoveWaits(id, "SHIPPED",
                Collections.<Callable<Response>>nCopies(8, () -> Api.transition(ops, id, "ship")));

        answers.forEach(a -> assertEquals(200, a.statusCode(), a.asString()));
        long moved = answers.stream().filter(a -> !Replays.isRepeat(a)).count();
        assertEquals(1, moved, "exactly one request moved the order; the others are told they repeat it");
        answers.forEach(a -> assertEquals("SHIPPED", a.jsonPath().getString("status")));
    }

    @Test
    void concurrentCancelsByOwnerAndOpsCloseTheOrderOnce() throws Exception {
        String bearer = Tokens.user(Tokens.newUserId());
        long id = Api.newOrder(bearer, 500);

        List<Response> answers = whileTheFirstMoveWaits(id, "CLOSED", List.of(
                () -> Api.transition(bearer, id, "cancel"),
                () -> Api.transition(ops, id, "cancel"),
                () -> Api.transition(bearer, id, "cancel"),
                () -> Api.transition(ops, id, "cancel")));

        assertEquals(1, answers.stream().filter(a -> !Replays.isRepeat(a)).count());
        assertTrue(answers.stream().allMatch(a -> a.statusCode() == 200));
    }

    @Test
    void aUserCannotCancelAnotherUsersOrder() {
        long id = Api.newOrder(Tokens.user(Tokens.newUserId()), 500);

        Response response = Api.transition(Tokens.user(Tokens.newUserId()), id, "cancel");

        assertEquals(404, response.statusCode());
        assertEquals("ORDER_NOT_FOUND", response.jsonPath().getString("code"));
        assertEquals("UNPAID", db.orderStatus(id));
    }

    @Test
    void aUserCannotShipOrComplete() {
        String bearer = Tokens.user(Tokens.newUserId());
        long id = Api.newOrder(bearer, 500);
        markPaid(id);

        assertEquals(403, Api.transition(bearer, id, "ship").statusCode());
        assertEquals(403, Api.transition(bearer, id, "complete").statusCode());
        assertEquals("PAID", db.orderStatus(id));
    }

    @Test
    void aMissingOrderIsNotFound() {
        Response response = Api.transition(ops, Long.MAX_VALUE, "ship");

        assertEquals(404, response.statusCode());
        assertEquals("ORDER_NOT_FOUND", response.jsonPath().getString("code"));
    }

    /**
     * Sends {@code requests} at once; the one whose compare-and-set moves order {@code id} to {@code status}
     * stops there, holding the row, at a trigger of the test's, until another has read the order as it was
     * and waits on the row to move it too: the race is run every time, not only when the requests happen to
     * overlap. The gate is shut until the test lets go, for less than the waiting statement's lock wait
     * ({@link UserLock#GATE_SECONDS}), which began later: the others are never answered 503.
     */
    private List<Response> whileTheFirstMoveWaits(long id, String status, List<Callable<Response>> requests) throws Exception {
        try (UserLock gate = UserLock.hold(db)) {
            db.update("CREATE TRIGGER test_move_waits BEFORE UPDATE ON orders FOR EACH ROW IF NEW.id = " + id
                    + " AND NEW.status = '" + status + "' THEN " + gate.waitStatement() + "; END IF");
            try (RequestsInFlight<Response> sent = RequestsInFlight.start(requests)) {
                gate.awaitWaiter(db);
                long waiting = LockWaits.awaitWaiting(db, "orders", id, "UPDATE orders SET status", 1);
                int answeredMeanwhile = sent.answered();
                gate.release();
                List<Response> answers = sent.answers();
                assertTrue(waiting >= 1 && answeredMeanwhile == 0,
                        "set-up: another request waited to move the order while the first held its row, and none was answered before: "
                                + waiting + " waiting, " + answeredMeanwhile + " answered");
                return answers;
            }
        } finally {
            // Once the gate's session has ended: a statement still at the gate would hold up the DROP.
            db.update("DROP TRIGGER IF EXISTS test_move_waits");
        }
    }

    private void markPaid(long id) {
        Buyer owner = Buyer.named(db.string("SELECT user_id FROM orders WHERE id = ?", id), 10_000);
        assertEquals(201, Api.pay(owner.bearer(), id, Api.newKey()).statusCode());
    }

    private static void assertMoved(Response response, String status, boolean moved) {
        assertEquals(200, response.statusCode(), response.asString());
        assertEquals(status, response.jsonPath().getString("status"));
        assertEquals(!moved, Replays.isRepeat(response), "a request that found the order there already is a repeat");
    }
}
