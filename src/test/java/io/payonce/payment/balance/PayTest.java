package io.payonce.payment.balance;

import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Buyer;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Management;
import io.payonce.support.RedisCli;
import io.payonce.support.Replays;
import io.payonce.support.RowHolder;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

@QuarkusTest
@ExtendWith(LedgerInvariants.class)
class PayTest {

    private final Database db = Database.forTests();

    @Test
    void paysOnceAndAnswersARetryWithTheFirstAnswer() {
        Buyer buyer = Buyer.withBalance(5000);
        long order = buyer.newOrder(1200);
        String key = Api.newKey();

        Response first = Api.pay(buyer.bearer(), order, key);
        Response retry = Api.pay(buyer.bearer(), order, key);

        assertEquals(201, first.statusCode(), first.asString());
        assertNull(first.header("Idempotent-Replayed"));
        assertEquals(1200, first.jsonPath().getLong("amount"));
        Replays.assertReplayOf(first, retry);
        assertEquals(3800, db.balance(buyer.userId()));
        assertEquals("PAID", db.orderStatus(order));
        assertEquals(1, db.payments(order));
    }

    /**
     * One click, then a second click and the gateway's retry while the first is still in flight: the
     * payer's account row is held by another session, so the first click's debit waits on it.
     */
    @Test
    void theIncidentFromThePostMortemChargesOnceAndAnswersAlike() throws Exception {
        Buyer buyer = Buyer.withBalance(10_000);
        long order = buyer.newOrder(2500);
        String key = Api.newKey();
        // 700 ms: long enough for the repeats to arrive, short enough that the debit's wait stays under the 1 s lock wait.
        CompletableFuture<Void> rowReleased = RowHolder.holdAccountRow(buyer.userId(), 700);
        ExecutorService firstClicker = Executors.newSingleThreadExecutor();
        List<Response> answers = new ArrayList<>();
        try {
            Future<Response> click = firstClicker.submit(() -> Api.pay(buyer.bearer(), order, key));
            awaitPayLockTaken(order);
            List<Response> repeats = Concurrently.run(List.of(
                    () -> Api.pay(buyer.bearer(), order, key),   // the second click
                    () -> Api.pay(buyer.bearer(), order, key))); // the gateway's retry after its timeout
            assertFalse(click.isDone(), "the repeats were answered while the first click was still in flight");
            answers.add(click.get(10, TimeUnit.SECONDS));
            answers.addAll(repeats);
        } finally {
            firstClicker.shutdown();
        }
        rowReleased.get(10, TimeUnit.SECONDS);

        List<Response> executions = answers.stream()
                .filter(a -> a.statusCode() == 201 && a.header("Idempotent-Replayed") == null).toList();
        assertEquals(1, executions.size(), "exactly one execution among " + describe(answers));
        Response executed = executions.get(0);
        for (Response answer : answers) {
            if (answer != executed) {
                assertReplayOrInFlight(executed, answer);
            }
        }
        assertEquals(1, db.payments(order));
        assertEquals(1, db.count("SELECT COUNT(*) FROM account_entry WHERE user_id = ? AND ref_type = 'PAYMENT'", buyer.userId()));
        assertEquals(7500, db.balance(buyer.userId()));
        Replays.assertReplayOf(executed, Api.pay(buyer.bearer(), order, key));
    }

    @Test
    void fiftyConcurrentIdenticalPaysDebitOnce() throws Exception {
        Buyer buyer = Buyer.withBalance(100_000);
        long order = buyer.newOrder(4000);
        String key = Api.newKey();

        List<Response> answers = Concurrently.run(50, () -> Api.pay(buyer.bearer(), order, key));

        Map<String, Integer> byKind = new TreeMap<>();
        Response executed = null;
        for (Response answer : answers) {
            String kind = answer.statusCode() + (answer.header("Idempotent-Replayed") != null ? " replayed"
                    : answer.statusCode() == 409 ? " " + answer.jsonPath().getString("code") : "");
            byKind.merge(kind, 1, Integer::sum);
            if (answer.statusCode() == 201 && answer.header("Idempotent-Replayed") == null) {
                executed = answer;
            }
        }
        System.out.printf("50 identical pays: %s, debits=%d%n", byKind, db.payments(order));
        assertEquals(1, byKind.getOrDefault("201", 0), "exactly one request executed");
        for (String kind : byKind.keySet()) {
            assertTrue(List.of("201", "201 replayed", "409 IDEMPOTENCY_KEY_IN_USE", "409 PAYMENT_IN_PROGRESS").contains(kind), kind);
        }
        for (Response answer : answers) {
            if (answer.statusCode() == 201) {
                Replays.assertSameAnswer(executed, answer);
            }
        }
        Replays.assertReplayOf(executed, Api.pay(buyer.bearer(), order, key));
        assertEquals(96_000, db.balance(buyer.userId()));
        assertEquals(1, db.payments(order));
    }

    @Test
    void twentyConcurrentPaysWithTwentyKeysDebitOnce() throws Exception {
        Buyer buyer = Buyer.withBalance(100_000);
        long order = buyer.newOrder(3000);
        List<Callable<Response>> payers = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            String key = Api.newKey();
            payers.add(() -> Api.payUntilSettled(buyer.bearer(), order, key));
        }

        List<Response> answers = Concurrently.run(payers);

        Response charged = answers.stream().filter(a -> !Replays.isRepeat(a)).findFirst().orElseThrow();
        long repeats = answers.stream().filter(Replays::isRepeat).count();
        System.out.printf("20 keys, one order: repeats=%d debits=%d%n", repeats, db.payments(order));
        assertEquals(19, repeats, "one charge, and every other key told that it repeats it");
        answers.forEach(a -> Replays.assertSameAnswer(charged, a));
        assertEquals(97_000, db.balance(buyer.userId()));
    }

    @Test
    void reusingAKeyForAnotherOrderIsRefusedNamingTheTarget() {
        Buyer buyer = Buyer.withBalance(10_000);
        long first = buyer.newOrder(100);
        long second = buyer.newOrder(100);
        String key = Api.newKey();
        assertEquals(201, Api.pay(buyer.bearer(), first, key).statusCode());

        Response reused = Api.pay(buyer.bearer(), second, key);

        assertEquals(422, reused.statusCode(), reused.asString());
        assertEquals("IDEMPOTENCY_KEY_REUSED", reused.jsonPath().getString("code"));
        assertTrue(reused.jsonPath().getString("detail").contains("target"));
        assertEquals("UNPAID", db.orderStatus(second));
    }


    @Test
    void theSameKeyFromAnotherUserIsIndependent() {
        Buyer alice = Buyer.withBalance(1000);
        Buyer bob = Buyer.withBalance(1000);
        long aliceOrder = alice.newOrder(300);
        long bobOrder = bob.newOrder(400);
        String sharedKey = "order-form-1";

        Response aliceAnswer = Api.pay(alice.bearer(), aliceOrder, sharedKey);
        Response bobAnswer = Api.pay(bob.bearer(), bobOrder, sharedKey);

        assertEquals(201, aliceAnswer.statusCode());
        assertEquals(201, bobAnswer.statusCode(), bobAnswer.asString());
        assertNull(bobAnswer.header("Idempotent-Replayed"));
        assertEquals(bobOrder, bobAnswer.jsonPath().getLong("orderId"));
        assertEquals(700, db.balance(alice.userId()));
        assertEquals(600, db.balance(bob.userId()));
    }

    @Test
    void insufficientFundsIsRecordedAndReplayedAndANewKeyPaysAfterADeposit() {
        Buyer buyer = Buyer.withBalance(500);
        long order = buyer.newOrder(800);
        String key = Api.newKey();

        Response refused = Api.pay(buyer.bearer(), order, key);
        Response replayed = Api.pay(buyer.bearer(), order, key);

        assertEquals(402, refused.statusCode(), refused.asString());
        assertEquals("INSUFFICIENT_FUNDS", refused.jsonPath().getString("code"));
        assertEquals("application/problem+json", refused.contentType());
        Replays.assertReplayOf(refused, replayed);
        assertEquals(500, db.balance(buyer.userId()));
        assertEquals("UNPAID", db.orderStatus(order));
        assertEquals(0, db.payments(order));

        assertEquals(201, Api.deposit(Tokens.ops(), buyer.userId(), Api.newKey(), 1000).statusCode());
        Response stillRecorded = Api.pay(buyer.bearer(), order, key);
        Response newKey = Api.pay(buyer.bearer(), order, Api.newKey());

        assertEquals(402, stillRecorded.statusCode(), "the recorded answer stands for its key");
        assertEquals(201, newKey.statusCode(), newKey.asString());
        assertEquals(700, db.balance(buyer.userId()));
    }


    @Test
    void aClosedOrderCannotBePaid() {
        Buyer buyer = Buyer.withBalance(10_000);
        long order = buyer.newOrder(100);
        assertEquals(200, Api.transition(buyer.bearer(), order, "cancel").statusCode());

        Response response = Api.pay(buyer.bearer(), order, Api.newKey());

        assertEquals(409, response.statusCode(), response.asString());
        assertEquals("ILLEGAL_TRANSITION", response.jsonPath().getString("code"));
        assertEquals("CLOSED", response.jsonPath().getString("currentStatus"));
        assertEquals(10_000, db.balance(buyer.userId()));
    }

    @Test
    void anotherUsersOrderIsNotFoundAndNotCharged() {
        Buyer owner = Buyer.withBalance(1000);
        Buyer stranger = Buyer.withBalance(1000);
        long order = owner.newOrder(100);

        Response response = Api.pay(stranger.bearer(), order, Api.newKey());

        assertEquals(404, response.statusCode());
        assertEquals("ORDER_NOT_FOUND", response.jsonPath().getString("code"));
        assertEquals(1000, db.balance(stranger.userId()));
        assertEquals(1000, db.balance(owner.userId()));
        assertEquals("UNPAID", db.orderStatus(order));
    }

    /**
     * The order and the key's record come from one statement; the owner check still comes first, so
     * a stranger's own key, already answered for their own order, reveals nothing on someone else's.
     */
    @Test
    void aStrangersAnsweredKeyOnAnotherUsersOrderIsStillNotFound() {
        Buyer owner = Buyer.withBalance(1000);
        Buyer stranger = Buyer.withBalance(1000);
        long order = owner.newOrder(100);
        long strangersOrder = stranger.newOrder(200);
        String key = Api.newKey();
        assertEquals(201, Api.pay(stranger.bearer(), strangersOrder, key).statusCode());

        Response response = Api.pay(stranger.bearer(), order, key);

        assertEquals(404, response.statusCode(), response.asString());
        assertEquals("ORDER_NOT_FOUND", response.jsonPath().getString("code"));
        assertNull(response.header("Idempotent-Replayed"));
        assertEquals(800, db.balance(stranger.userId()));
        assertEquals(1000, db.balance(owner.userId()));
        assertEquals("UNPAID", db.orderStatus(order));
    }

    @Test
    void aQuotedKeyIsTheSameKeyAsItsBareForm() {
        Buyer buyer = Buyer.withBalance(1000);
        long order = buyer.newOrder(100);
        String key = Api.newKey();

        Response bare = Api.pay(buyer.bearer(), order, key);
        Response quoted = Api.pay(buyer.bearer(), order, "\"" + key + "\"");

        assertEquals(201, bare.statusCode());
        Replays.assertReplayOf(bare, quoted);
    }

    @Test
    void aMissingOrMalformedKeyIsRefusedAndChargesNothing() {
        Buyer buyer = Buyer.withBalance(1000);
        long order = buyer.newOrder(100);

        Response missing = Api.as(buyer.bearer()).post("/orders/" + order + "/pay");
        assertEquals(400, missing.statusCode());
        assertEquals("IDEMPOTENCY_KEY_MISSING", missing.jsonPath().getString("code"));
        for (String bad : List.of("k".repeat(65), "with space", "\"unterminated", "ké", "\"\"", "back\\slash")) {
            Response response = Api.pay(buyer.bearer(), order, bad);
            assertEquals(400, response.statusCode(), "key <" + bad + ">: " + response.asString());
            assertEquals("IDEMPOTENCY_KEY_INVALID", response.jsonPath().getString("code"), bad);
        }
        assertEquals(1000, db.balance(buyer.userId()));
        assertEquals("UNPAID", db.orderStatus(order));
    }

    /**
     * Tests run one at a time, so only this test's pays move the pay series between the two readings:
     * three answered by payonce, and a stranger's, refused before anything under a key is looked at.
     */
    @Test
    void metricsNameTheLayerThatCaughtEachDuplicate() {
        Buyer buyer = Buyer.withBalance(1000);
        Buyer stranger = Buyer.withBalance(1000);
        long order = buyer.newOrder(100);
        String key = Api.newKey();
        String before = Management.metrics();

        Response paid = Api.pay(buyer.bearer(), order, key);
        Response replay = Api.pay(buyer.bearer(), order, key);
        Response alreadyPaid = Api.pay(buyer.bearer(), order, Api.newKey());
        Response strangers = Api.pay(stranger.bearer(), order, Api.newKey());
        String after = Management.metrics();

        assertEquals(404, strangers.statusCode(), strangers.asString());
        assertEquals(201, paid.statusCode(), paid.asString());
        Replays.assertReplayOf(paid, replay);
        Replays.assertReplayOf(paid, alreadyPaid);
        assertEquals(1, moved(before, after, "payonce_duplicates_total{layer=\"idempotency_key\",operation=\"pay\"}"), "the replay");
        assertEquals(1, moved(before, after, "payonce_duplicates_total{layer=\"state_cas\",operation=\"pay\"}"), "the new key on a paid order");
        assertEquals(0, moved(before, after, "payonce_duplicates_total{layer=\"lock\",operation=\"pay\"}"), "no twin held the lock");
        assertEquals(0, moved(before, after, "payonce_duplicates_total{layer=\"unique_index\",operation=\"pay\"}"), "the CAS caught it first");
        // The new key on the paid order ran under its own key: an execution whose answer is "already paid".
        assertEquals(2, moved(before, after, "payonce_requests_total{operation=\"pay\",outcome=\"executed\"}"), "executed");
        assertEquals(1, moved(before, after, "payonce_requests_total{operation=\"pay\",outcome=\"replayed\"}"), "replayed");
        assertEquals(3, moved(before, after, "payonce_operation_seconds_count{operation=\"pay\"}"), "each answer timed, the 404 not");
    }

    private static double moved(String before, String after, String series) {
        return Management.sample(after, series) - Management.sample(before, series);
    }

    /** Waits until a request holds the order's pay lock in Redis: that request is then inside the pay pipeline. */
    private static void awaitPayLockTaken(long order) {
        Await.until(() -> "1".equals(RedisCli.run("EXISTS", RedisCli.payLockKey(order))), Duration.ofSeconds(5),
                "a request took the pay lock of order " + order);
    }

    /** A repeat of the executed pay: its stored answer replayed, or told that the twin is still in flight. */
    private static void assertReplayOrInFlight(Response executed, Response repeat) {
        if (repeat.header("Idempotent-Replayed") != null) {
            Replays.assertReplayOf(executed, repeat);
            return;
        }
        assertEquals(409, repeat.statusCode(), repeat.asString());
        assertTrue(List.of("PAYMENT_IN_PROGRESS", "IDEMPOTENCY_KEY_IN_USE").contains(repeat.jsonPath().getString("code")), repeat.asString());
        assertNotNull(repeat.header("Retry-After"), "a twin in flight says when to retry");
    }

    private static String describe(List<Response> answers) {
        return answers.stream().map(a -> a.statusCode() + (a.header("Idempotent-Replayed") != null ? " replayed " : " ") + a.asString()).toList().toString();
    }
}
