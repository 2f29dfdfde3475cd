package io.payonce.order;

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
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Order creation and transitions sent with an Idempotency-Key instead of relying on tokens or CAS alone.
 * Its race holds a create until its twins wait on it, and none of them gives up first.
 */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
class IdempotentOrderWritesTest {

    private final Database db = Database.forTests();
    private final ExecutorService client = Executors.newSingleThreadExecutor();

    @AfterEach
    void stopTheClient() {
        client.shutdownNow();
    }

    /**
     * The first create is held by the test's trigger just before it writes the order, its key claimed,
     * until the test lets go; the other seven come while it is, and their claims wait for its claim until
     * it commits.
     */
    @Test
    void concurrentCreatesWithOneKeyMakeOneOrderAndReplayIt() throws Exception {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);
        String key = Api.newKey();
        String sn = "sn-" + UUID.randomUUID();

        List<Response> answers = new ArrayList<>();
        try (UserLock gate = UserLock.hold(db)) {
            db.update("CREATE TRIGGER test_held_order_insert BEFORE INSERT ON orders FOR EACH ROW "
                    + "IF NEW.order_sn = '" + sn + "' THEN " + gate.waitStatement() + "; END IF");
            CompletableFuture<Response> first = CompletableFuture.supplyAsync(() -> createWithKey(bearer, key, sn, 900), client);
            gate.awaitWaiter(db);
            try (RequestsInFlight<Response> twins = RequestsInFlight.start(7, () -> createWithKey(bearer, key, sn, 900))) {
                // Their claims of the key wait for the first's, which is uncommitted.
                long waiting = LockWaits.awaitWaiting(db, "idempotency_record", null, "INSERT INTO idempotency_record", 7);
                boolean firstInFlight = !first.isDone();
                gate.release();
                answers.add(first.get(30, TimeUnit.SECONDS));
                answers.addAll(twins.answers());
                assertTrue(waiting >= 7 && firstInFlight, "set-up: the seven twins' claims waited for the first's while it was in its transaction");
            }
        } finally {
            // After the lock's session has ended: a create still in the trigger would hold up the DROP.
            db.update("DROP TRIGGER IF EXISTS test_held_order_insert");
        }

        long created = answers.stream().filter(a -> a.statusCode() == 201 && a.header("Idempotent-Replayed") == null).count();
        assertEquals(1, created);
        Response firstCreated = answers.stream().filter(a -> a.statusCode() == 201).findFirst().orElseThrow();
        answers.stream().filter(a -> a.statusCode() == 201).forEach(a -> Replays.assertSameAnswer(firstCreated, a));
        answers.forEach(a -> assertTrue(a.statusCode() == 201 || a.statusCode() == 409, a.asString()));
        assertEquals(1, db.count("SELECT COUNT(*) FROM orders WHERE user_id = ?", user));
    }

    @Test
    void reusingACreateKeyForAnotherOrderNamesTheFields() {
        String bearer = Tokens.user(Tokens.newUserId());
        String key = Api.newKey();
        createWithKey(bearer, key, "sn-" + UUID.randomUUID(), 900);

        Response reused = createWithKey(bearer, key, "sn-" + UUID.randomUUID(), 900);

        assertEquals(422, reused.statusCode());
        assertEquals("IDEMPOTENCY_KEY_REUSED", reused.jsonPath().getString("code"));
        assertTrue(reused.jsonPath().getString("detail").endsWith("orderSn."), reused.asString());
    }

    @Test
    void aTransitionWithAKeyReplaysItsFirstAnswer() {
        String bearer = Tokens.user(Tokens.newUserId());
        long order = Api.newOrder(bearer, 500);
        String key = Api.newKey();

        Response first = Api.as(bearer).header("Idempotency-Key", key).post("/orders/" + order + "/cancel");
        Response replay = Api.as(bearer).header("Idempotency-Key", key).post("/orders/" + order + "/cancel");
        Response withoutKey = Api.transition(bearer, order, "cancel");

        assertEquals(200, first.statusCode(), first.asString());
        assertEquals("CLOSED", first.jsonPath().getString("status"));
        assertNull(first.header("Idempotent-Replayed"));
        Replays.assertReplayOf(first, replay);
        assertEquals(200, withoutKey.statusCode(), withoutKey.asString());
        assertEquals("true", withoutKey.header("Idempotent-Replayed"), "the order was closed already: a repeat");
    }

    @Test
    void anIllegalTransitionWithAKeyIsRecorded() {
        String bearer = Tokens.user(Tokens.newUserId());
        long order = Api.newOrder(bearer, 500);
        String key = Api.newKey();
        String ops = Tokens.ops();

        Response first = Api.as(ops).header("Idempotency-Key", key).post("/orders/" + order + "/ship");
        Response replay = Api.as(ops).header("Idempotency-Key", key).post("/orders/" + order + "/ship");

        assertEquals(409, first.statusCode());
        assertEquals("ILLEGAL_TRANSITION", first.jsonPath().getString("code"));
        Replays.assertReplayOf(first, replay);
    }

    private static Response createWithKey(String bearer, String key, String sn, long amount) {
        return Api.as(bearer).header("Idempotency-Key", key).contentType(ContentType.JSON)
                .body(Map.of("orderSn", sn, "amount", amount, "currency", "EUR")).post("/orders");
    }
}
