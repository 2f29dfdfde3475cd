package io.payonce.payment.balance;

import io.payonce.support.Api;
import io.payonce.support.Buyer;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.GatedStores.Store;
import io.payonce.support.GatedStores;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.payonce.support.StoreDown;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Callable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Redis is unreachable for this whole class: payments go on through the database alone. */
@QuarkusTest
@TestProfile(GatedStores.class)
@ExtendWith(LedgerInvariants.class)
@StoreDown(Store.REDIS)
class PayWithoutRedisTest {

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    @Test
    void duplicatesAndRacingKeysStillChargeOnce() throws Exception {
        Buyer buyer = Buyer.withBalance(10_000);
        String user = buyer.userId();
        String bearer = buyer.bearer();
        long order = Api.newOrderWithKey(bearer, 2000);
        double degradedBefore = meters.count("payonce.lock.degraded");
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

        List<Response> answers = Concurrently.run(requests);

        long charged = answers.stream().filter(a -> a.statusCode() == 201 && a.header("Idempotent-Replayed") == null).count();
        long settled = answers.stream().filter(a -> a.statusCode() == 201).count();
        System.out.printf("without Redis: 30 pays of one order -> charged=%d settled=%d degraded=%.0f debits=%d%n",
                charged, settled, meters.count("payonce.lock.degraded") - degradedBefore, db.payments(order));
        assertEquals(1, charged);
        assertEquals(30, settled);
        assertEquals(1, db.payments(order));
        assertEquals(8000, db.balance(user));
        // A repeat that finds its key's answer stored is answered before the lock. Each key's answer
        // was stored by a pay that reached the lock, and Redis could vouch for none of them.
        assertTrue(meters.count("payonce.lock.degraded") - degradedBefore >= 1 + otherKeys, "at least one pay per key went without the lock");
    }

    @Test
    void anOrderFormNeedsRedisAndSaysSo() {
        Response response = Api.createOrder(Tokens.user(Tokens.newUserId()), "some-token", "sn-" + UUID.randomUUID(), 100);

        assertEquals(503, response.statusCode(), response.asString());
        assertEquals("DEPENDENCY_UNAVAILABLE", response.jsonPath().getString("code"));
        assertEquals("1", response.header("Retry-After"));
    }
}
