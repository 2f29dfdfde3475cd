package io.payonce.payment.balance;

import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.BoundsOutlastHolds;
import io.payonce.support.Buyer;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Management;
import io.payonce.support.Replays;
import io.payonce.support.RequestsInFlight;
import io.payonce.support.RowHolder;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Balance pays. On {@link BoundsOutlastHolds}: the races below hold the payer's account row under the
 * debit of the pay that took the order's lock, and under the test profile's 1 s lock wait that debit
 * would be run again every second and given up after four attempts (about 4 s), answering 503 and
 * giving back its lock, so a set-up slowed past that would judge another race than the one it built.
 * With a 20 s lock wait it waits in one attempt until the test lets go. The pay lock still lives its
 * 5 s (payonce.lock.ttl, which that profile leaves alone): each set-up has its twins answered within
 * a second or so of the lock being taken, and a twin come after the lock's life would meet the pay
 * still in flight at its claim or its order row instead. No test here depends on the test profile's
 * lock wait, retries or processor timeout.
 */
@QuarkusTest
@TestProfile(BoundsOutlastHolds.class)
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
        // Let go once the repeats are answered: until then the first click's debit waits on the row, its pay lock and claim held.
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdAccountRowUntil(db, buyer.userId(), release);
        ExecutorService firstClicker = Executors.newSingleThreadExecutor();
        List<Response> answers = new ArrayList<>();
        try {
            Future<Response> click = firstClicker.submit(() -> Api.pay(buyer.bearer(), order, key));
            db.awaitDebitWaitingFor(buyer.userId());
            List<Response> repeats = Concurrently.run(List.of(
                    () -> Api.pay(buyer.bearer(), order, key),   // the second click
                    () -> Api.pay(buyer.bearer(), order, key))); // the gateway's retry after its timeout
            assertFalse(click.isDone(), "set-up: the repeats were answered while the first click was still in flight");
            release.complete(null);
            answers.add(click.get(10, TimeUnit.SECONDS));
            answers.addAll(repeats);
        } finally {
            release.complete(null); // when the set-up failed too, not after the holder's 30 s
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

    /**
     * Fifty clicks at once while another session holds the payer's account row: the one that takes the
     * pay lock waits in its debit, so the other 49 are answered while it is still in its transaction,
     * never after it has committed (a replay), as they would be if it were quick.
     */
    @Test
    void fiftyConcurrentIdenticalPaysDebitOnce() throws Exception {
        Buyer buyer = Buyer.withBalance(100_000);
        long order = buyer.newOrder(4000);
        String key = Api.newKey();
        // Let go once the others are answered: until then the debit of the click with the pay lock waits on the row.
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdAccountRowUntil(db, buyer.userId(), release);
        List<Response> answers;
        try (RequestsInFlight<Response> clicks = RequestsInFlight.start(50, () -> Api.pay(buyer.bearer(), order, key))) {
            db.awaitDebitWaitingFor(buyer.userId());
            clicks.awaitAnswered(49, "the 49 clicks without the pay lock answered");
            assertEquals(49, clicks.answered(), "set-up: 49 clicks were answered while the one with the pay lock was still in its transaction");
            release.complete(null);
            answers = clicks.answers();
        } finally {
            release.complete(null); // when the set-up failed too, not after the holder's 30 s
        }
        rowReleased.get(10, TimeUnit.SECONDS);

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
        assertEquals(49, answers.stream().filter(answer -> answer.statusCode() == 409).count(),
                "set-up: the 49 were told their twin was in flight, not replayed its answer: " + byKind);
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

    /**
     * Twenty keys for one order at once while another session holds the payer's account row: the pay
     * that takes the order's lock waits in its debit, and every other key is told the pay is in
     * progress, and sends again, until it has committed; then each finds the order paid.
     */
    @Test
    void twentyConcurrentPaysWithTwentyKeysDebitOnce() throws Exception {
        Buyer buyer = Buyer.withBalance(100_000);
        long order = buyer.newOrder(3000);
        // The keys answered PAYMENT_IN_PROGRESS, each once however often it sends again: one key retrying
        // every 20-50 ms would pile up as many refusals on its own.
        Set<String> refusedKeys = ConcurrentHashMap.newKeySet();
        List<Callable<Response>> payers = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            String key = Api.newKey();
            payers.add(() -> Api.untilSettled(() -> notingLockRefusal(Api.pay(buyer.bearer(), order, key), key, refusedKeys)));
        }
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdAccountRowUntil(db, buyer.userId(), release);
        List<Response> answers;
        int keysRefused;
        try (RequestsInFlight<Response> pays = RequestsInFlight.start(payers)) {
            db.awaitDebitWaitingFor(buyer.userId());
            // Each in-flight answer is given while a twin holds the lock; none settles a key.
            keysRefused = Await.until(refusedKeys::size, refused -> refused >= 19 || pays.answered() > 0,
                    Duration.ofSeconds(10), "every other key told the pay is in progress");
            release.complete(null);
            answers = pays.answers();
        } finally {
            release.complete(null); // when the set-up failed too, not after the holder's 30 s
        }
        rowReleased.get(10, TimeUnit.SECONDS);

        Response charged = answers.stream().filter(a -> !Replays.isRepeat(a)).findFirst().orElseThrow();
        long repeats = answers.stream().filter(Replays::isRepeat).count();
        System.out.printf("20 keys, one order: repeats=%d debits=%d keys refused by the lock=%d%n", repeats, db.payments(order), keysRefused);
        assertTrue(keysRefused >= 19, "set-up: each other key met the pay lock while the pay holding it was in its transaction: " + keysRefused);
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

    /** {@code answer}, noting {@code key} in {@code refusedKeys} when the pay lock refused it: a twin held the lock. */
    private static Response notingLockRefusal(Response answer, String key, Set<String> refusedKeys) {
        if (answer.statusCode() == 409 && "PAYMENT_IN_PROGRESS".equals(answer.jsonPath().getString("code"))) {
            refusedKeys.add(key);
        }
        return answer;
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
