package io.payonce.order;

import io.payonce.support.Api;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.LockWaits;
import io.payonce.support.RedisCli;
import io.payonce.support.Replays;
import io.payonce.support.RequestsInFlight;
import io.payonce.support.Tokens;
import io.payonce.support.UserLock;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Its races hold a submission until every repeat's claim waits on it, and none of them gives up first. */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
class SubmitTokenTest {

    private final Database db = Database.forTests();
    private final ExecutorService client = Executors.newSingleThreadExecutor();

    @AfterEach
    void stopTheClient() {
        client.shutdownNow();
    }

    @Test
    void issuesATokenThatIsNeverCached() {
        Response response = Api.as(Tokens.user(Tokens.newUserId())).get("/orders/token");

        assertEquals(200, response.statusCode());
        assertEquals("no-store", response.header("Cache-Control"));
        assertEquals(43, response.jsonPath().getString("token").length());
        assertEquals(600, response.jsonPath().getLong("expiresInSeconds"));
    }

    /** The second submit comes while the first is in its transaction: it waits for the first's claim, and replays it. */
    @Test
    void twoConcurrentSubmitsWithOneTokenCreateOneOrderAndReplayIt() throws Exception {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);
        String token = Api.submitToken(bearer);
        String sn = "sn-" + UUID.randomUUID();

        List<Response> answers = submitWhileTheFirstIsHeld(bearer, token, sn, 1500, 1);

        assertEquals(201, answers.get(0).statusCode(), answers.get(0).asString());
        assertEquals(201, answers.get(1).statusCode(), answers.get(1).asString());
        assertEquals(answers.get(0).jsonPath().getLong("id"), answers.get(1).jsonPath().getLong("id"));
        Replays.assertSameAnswer(answers.get(0), answers.get(1));
        long replays = answers.stream().filter(a -> "true".equals(a.header("Idempotent-Replayed"))).count();
        assertEquals(1, replays, "exactly one answer is the replay");
        assertEquals(1, db.count("SELECT COUNT(*) FROM orders WHERE user_id = ?", user));
    }

    @Test
    void aLaterRepeatOfTheSameSubmissionReplaysTheFirstOrder() {
        String bearer = Tokens.user(Tokens.newUserId());
        String token = Api.submitToken(bearer);
        String sn = "sn-" + UUID.randomUUID();

        Response first = Api.createOrder(bearer, token, sn, 700);
        Response again = Api.createOrder(bearer, token, sn, 700);

        assertEquals(201, first.statusCode());
        assertNull(first.header("Idempotent-Replayed"));
        Replays.assertReplayOf(first, again);
    }

    @Test
    void anotherUsersTokenIsRejectedAndTheOwnerCanStillUseIt() {
        String owner = Tokens.newUserId();
        String thief = Tokens.newUserId();
        String ownerBearer = Tokens.user(owner);
        String token = Api.submitToken(ownerBearer);

        Response stolen = Api.createOrder(Tokens.user(thief), token, "sn-" + UUID.randomUUID(), 900);
        Response own = Api.createOrder(ownerBearer, token, "sn-" + UUID.randomUUID(), 900);

        assertEquals(409, stolen.statusCode());
        assertEquals("SUBMIT_TOKEN_INVALID", stolen.jsonPath().getString("code"));
        assertEquals(0, db.count("SELECT COUNT(*) FROM orders WHERE user_id = ?", thief));
        assertEquals(201, own.statusCode(), own.asString());
        assertEquals(owner, own.jsonPath().getString("userId"));
    }

    @Test
    void aReplayIsNeverShownToAnotherUser() {
        String ownerBearer = Tokens.user(Tokens.newUserId());
        String token = Api.submitToken(ownerBearer);
        String sn = "sn-" + UUID.randomUUID();
        assertEquals(201, Api.createOrder(ownerBearer, token, sn, 900).statusCode());

        Response other = Api.createOrder(Tokens.user(Tokens.newUserId()), token, sn, 900);

        assertEquals(409, other.statusCode());
        assertEquals("SUBMIT_TOKEN_INVALID", other.jsonPath().getString("code"));
    }

    @Test
    void anUnknownTokenIsAConflictTellingTheUserToReload() {
        String user = Tokens.newUserId();

        Response response = Api.createOrder(Tokens.user(user), "never-issued", "sn-" + UUID.randomUUID(), 100);

        assertEquals(409, response.statusCode());
        assertEquals("SUBMIT_TOKEN_INVALID", response.jsonPath().getString("code"));
        assertEquals("application/problem+json", response.contentType());
        assertEquals(0, db.rowsOwnedBy(user));
    }

    @Test
    void aNewTokenForTheSameContentIsARepeatOfTheExistingOrderAndItsRepeatReplaysThatAnswer() {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);
        String sn = "sn-" + UUID.randomUUID();
        Response first = Api.createOrder(bearer, Api.submitToken(bearer), sn, 1200);
        String secondToken = Api.submitToken(bearer);

        Response second = Api.createOrder(bearer, secondToken, sn, 1200);
        Response repeat = Api.createOrder(bearer, secondToken, sn, 1200);

        Replays.assertReplayOf(first, second);
        Replays.assertReplayOf(second, repeat);
        assertEquals(1, db.count("SELECT COUNT(*) FROM orders WHERE user_id = ?", user));
    }

    @Test
    void theSameOrderNumberWithOtherContentIsAConflictAndItsRepeatGetsTheConflictAgain() {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);
        String sn = "sn-" + UUID.randomUUID();
        assertEquals(201, Api.createOrder(bearer, Api.submitToken(bearer), sn, 1200).statusCode());
        String token = Api.submitToken(bearer);

        Response otherAmount = Api.createOrder(bearer, token, sn, 1300);
        Response repeat = Api.createOrder(bearer, token, sn, 1300);

        assertEquals(409, otherAmount.statusCode());
        assertEquals("ORDER_SN_CONFLICT", otherAmount.jsonPath().getString("code"));
        Replays.assertReplayOf(otherAmount, repeat);
        assertEquals(1, db.count("SELECT COUNT(*) FROM orders WHERE user_id = ?", user));
    }

    /**
     * An instance killed between consuming the token and writing the order, or a consume whose Redis
     * call timed out after Redis ran it, leaves the token consumed and no order: the repeat completes
     * the submission, and its own repeat replays it.
     */
    @Test
    void aSubmissionWhoseFirstAttemptDiedAfterConsumingTheTokenIsCompletedByItsRepeat() {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);
        String token = Api.submitToken(bearer);
        consumeAsADyingInstanceWould(token, user);
        String sn = "sn-" + UUID.randomUUID();

        Response repeat = Api.createOrder(bearer, token, sn, 800);
        Response again = Api.createOrder(bearer, token, sn, 800);

        assertEquals(201, repeat.statusCode(), repeat.asString());
        Replays.assertReplayOf(repeat, again);
        assertEquals(1, db.count("SELECT COUNT(*) FROM orders WHERE user_id = ?", user));
    }

    @Test
    void aRepeatAfterPaymentReplaysTheStoredAnswerByteForByte() {
        Buyer buyer = Buyer.withBalance(1000);
        String token = Api.submitToken(buyer.bearer());
        String sn = "sn-" + UUID.randomUUID();
        Response first = Api.createOrder(buyer.bearer(), token, sn, 600);
        assertEquals(201, Api.pay(buyer.bearer(), first.jsonPath().getLong("id"), Api.newKey()).statusCode());

        Response repeat = Api.createOrder(buyer.bearer(), token, sn, 600);

        Replays.assertReplayOf(first, repeat);
        assertEquals("UNPAID", repeat.jsonPath().getString("status"));
    }

    /** Nine clicks come together while the first is in its transaction: each waits for its claim, and replays it. */
    @Test
    void tenClicksOnOneFormMakeOneOrderAndAllGetItsAnswer() throws Exception {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);
        String token = Api.submitToken(bearer);
        String sn = "sn-" + UUID.randomUUID();

        List<Response> answers = submitWhileTheFirstIsHeld(bearer, token, sn, 1500, 9);

        answers.forEach(a -> assertEquals(201, a.statusCode(), a.asString()));
        answers.forEach(a -> Replays.assertSameAnswer(answers.get(0), a));
        assertEquals(9, answers.stream().filter(a -> "true".equals(a.header("Idempotent-Replayed"))).count());
        assertEquals(1, db.count("SELECT COUNT(*) FROM orders WHERE user_id = ?", user));
    }

    @Test
    void aTokenSentAgainWithOtherContentIsAFormAlreadySubmitted() {
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);
        String token = Api.submitToken(bearer);
        assertEquals(201, Api.createOrder(bearer, token, "sn-" + UUID.randomUUID(), 500).statusCode());

        Response edited = Api.createOrder(bearer, token, "sn-" + UUID.randomUUID(), 700);

        assertEquals(409, edited.statusCode(), edited.asString());
        assertEquals("SUBMIT_TOKEN_INVALID", edited.jsonPath().getString("code"));
        assertEquals(1, db.count("SELECT COUNT(*) FROM orders WHERE user_id = ?", user));
    }

    /**
     * Sends the submission once and holds it in its transaction, its token's key claimed, just before
     * it writes the order: the test's trigger waits there on a lock of the test's until the test lets
     * go. Then sends {@code repeats} copies together and lets go once every one's claim waits for the
     * first's. The gate is shut for less than their lock wait ({@link UserLock#GATE_SECONDS}), so that
     * each repeat finds the first's claim committed and replays it, never times out on it (409
     * IDEMPOTENCY_KEY_IN_USE). Returns the first's answer, then the repeats'.
     */
    private List<Response> submitWhileTheFirstIsHeld(String bearer, String token, String sn, long amount, int repeats)
            throws Exception {
        try (UserLock gate = UserLock.hold(db)) {
            db.update("CREATE TRIGGER test_held_submission BEFORE INSERT ON orders FOR EACH ROW "
                    + "IF NEW.order_sn = '" + sn + "' THEN " + gate.waitStatement() + "; END IF");
            CompletableFuture<Response> first = CompletableFuture.supplyAsync(() -> Api.createOrder(bearer, token, sn, amount), client);
            gate.awaitWaiter(db);
            try (RequestsInFlight<Response> clicks = RequestsInFlight.start(repeats, () -> Api.createOrder(bearer, token, sn, amount))) {
                // Their claims of the token's key wait for the first's, which is uncommitted.
                long waiting = LockWaits.awaitWaiting(db, "idempotency_record", null, "INSERT INTO idempotency_record", repeats);
                boolean firstInFlight = !first.isDone();
                gate.release();
                List<Response> answers = new ArrayList<>();
                answers.add(first.get(30, TimeUnit.SECONDS));
                answers.addAll(clicks.answers());
                assertTrue(waiting >= repeats && firstInFlight, "set-up: every repeat's claim waited for the first's while it was in its transaction");
                return answers;
            }
        } finally {
            // After the lock's session has ended: a submission still in the trigger would hold up the DROP.
            db.update("DROP TRIGGER IF EXISTS test_held_submission");
        }
    }

    /** What the consume script leaves behind: the token gone, its consumed marker naming the caller. */
    private static void consumeAsADyingInstanceWould(String token, String user) {
        assertEquals("1", RedisCli.run("DEL", "payonce:token:{" + token + "}"));
        assertEquals("OK", RedisCli.run("SET", "payonce:token:{" + token + "}:consumed", user, "PX", "600000"));
    }
}
