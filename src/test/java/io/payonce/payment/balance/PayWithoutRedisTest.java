package io.payonce.payment.balance;

import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.GatedStores.Store;
import io.payonce.support.GatedStores;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.payonce.support.RequestsInFlight;
import io.payonce.support.RowHolder;
import io.payonce.support.StoreDown;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Redis is unreachable for this whole class: payments go on through the database alone. On the test
 * profile's 1 s lock wait, not {@code BoundsOutlastHolds}': the set-up counts twins told that their key
 * is in use, which only a claim that waited out the lock wait gives.
 */
@QuarkusTest
@TestProfile(GatedStores.class)
@ExtendWith(LedgerInvariants.class)
@StoreDown(Store.REDIS)
class PayWithoutRedisTest {

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    /**
     * The payer's account row is held by another session while the requests run: whichever pay gets
     * furthest waits in its debit with its key claimed and the order row moved, so the others meet
     * it in the database, the only guard left. Let go once a twin has been told its key is in use.
     *
     * <p>Nothing here depends on how long one pay stays in flight. Its debit waits the 1 s lock wait and
     * is run again, four attempts in all (about 4 s), then it is answered 503 with Retry-After and
     * its client sends it again; with no pay lock to give back, the race after that is the race before:
     * the pays that reach the database claim, wait and give way to each other as long as the row is
     * held. And while it is held no pay can commit, every one needing that row for its debit, so each
     * 409 IDEMPOTENCY_KEY_IN_USE counted then is a claim that waited the whole lock wait on a twin's
     * claim still open in its transaction, whichever twin that was.
     */
    @Test
    void duplicatesAndRacingKeysStillChargeOnce() throws Exception {
        Buyer buyer = Buyer.withBalance(10_000);
        String user = buyer.userId();
        String bearer = buyer.bearer();
        long order = Api.newOrderWithKey(bearer, 2000);
        double degradedBefore = meters.count("payonce.lock.degraded");
        double keyInUseBefore = keyInUseAnswers();
        String sameKey = Api.newKey();
        List<Callable<Response>> requests = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            requests.add(() -> Api.payUntilSettled(bearer, order, sameKey));
        }
        int otherKeys = 10;
        for (int i = 0; i < otherKeys; i++) {
            String otherKey = Api.newKey();
            requests.add(() -> Api.payUntilSettled(bearer, order, otherKey));
        }

        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdAccountRowUntil(db, user, release);
        List<Response> answers;
        double keyInUseWhileHeld;
        try (RequestsInFlight<Response> paying = RequestsInFlight.start(requests)) {
            db.awaitDebitWaitingFor(user);
            // The first comes a lock wait (1 s) after a twin began to wait on a claim, so within a few lock waits. The bound
            // is the clients' budget: each sends again for 30 s at most (Api.untilSettled), and the debit seen waiting (6 s at
            // most), this wait (8 s) and the settling after the release must fit in it.
            keyInUseWhileHeld = Await.until(() -> keyInUseAnswers() - keyInUseBefore, inUse -> inUse >= 1 || paying.answered() > 0,
                    Duration.ofSeconds(8), "a twin told that its key is in use");
            release.complete(null);
            answers = paying.answers();
        } finally {
            release.complete(null); // when the set-up failed too, not after the holder's 30 s
        }
        rowReleased.get(10, TimeUnit.SECONDS);

        long charged = answers.stream().filter(a -> a.statusCode() == 201 && a.header("Idempotent-Replayed") == null).count();
        long settled = answers.stream().filter(a -> a.statusCode() == 201).count();
        System.out.printf("without Redis: 30 pays of one order -> charged=%d settled=%d degraded=%.0f debits=%d key in use=%.0f%n",
                charged, settled, meters.count("payonce.lock.degraded") - degradedBefore, db.payments(order), keyInUseWhileHeld);
        assertTrue(keyInUseWhileHeld >= 1, "set-up: twins of one key met in their transactions, with no lock between them");
        assertEquals(1, charged);
        assertEquals(30, settled);
        assertEquals(1, db.payments(order));
        assertEquals(8000, db.balance(user));
        // A repeat that finds its key's answer stored is answered before the lock. Each key's answer
        // was stored by a pay that reached the lock, and Redis could vouch for none of them.
        assertTrue(meters.count("payonce.lock.degraded") - degradedBefore >= 1 + otherKeys, "at least one pay per key went without the lock");
    }

    /** In-flight answers: without Redis, only a twin's claim of the same key gives them (409 IDEMPOTENCY_KEY_IN_USE). */
    private double keyInUseAnswers() {
        return meters.count("payonce.requests", "operation", "pay", "outcome", "conflict");
    }

    @Test
    void anOrderFormNeedsRedisAndSaysSo() {
        Response response = Api.createOrder(Tokens.user(Tokens.newUserId()), "some-token", "sn-" + UUID.randomUUID(), 100);

        assertEquals(503, response.statusCode(), response.asString());
        assertEquals("DEPENDENCY_UNAVAILABLE", response.jsonPath().getString("code"));
        assertEquals("1", response.header("Retry-After"));
    }
}
