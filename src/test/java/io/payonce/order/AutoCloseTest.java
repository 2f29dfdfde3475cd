package io.payonce.order;

import io.payonce.support.Api;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@QuarkusTest
class AutoCloseTest {

    private final Database db = Database.forTests();

    @Inject
    OrderRepository orders;

    @Inject
    AutoCloseJob autoClose;

    @Test
    void closesOnlyStaleUnpaidOrders() {
        String bearer = Tokens.user(Tokens.newUserId());
        long stale = Api.newOrder(bearer, 100);
        long fresh = Api.newOrder(bearer, 100);
        long stalePaid = Api.newOrder(bearer, 100);
        makeStale(stale);
        makeStale(stalePaid);
        orders.compareAndSetStatus(stalePaid, OrderStatus.UNPAID, OrderStatus.PAID).await().indefinitely();

        autoClose.closeStaleOrders().await().indefinitely();

        assertEquals("CLOSED", db.orderStatus(stale));
        assertEquals("UNPAID", db.orderStatus(fresh));
        assertEquals("PAID", db.orderStatus(stalePaid));
    }

    @Test
    void closesMoreStaleOrdersThanOneBatchHolds() {
        String bearer = Tokens.user(Tokens.newUserId());
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            long id = Api.newOrder(bearer, 100);
            makeStale(id);
            ids.add(id);
        }

        int closed = autoClose.closeStaleOrders().await().indefinitely();

        assertTrue(closed >= 5, "closed " + closed);
        ids.forEach(id -> assertEquals("CLOSED", db.orderStatus(id)));
    }

    @Test
    void aPaymentInTheSameInstantAsTheAutoCloseIsNeverClosed() throws Exception {
        String user = Tokens.newUserId();
        Api.fundedAccount(user, 1_000_000);
        String bearer = Tokens.user(user);
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            long id = Api.newOrder(bearer, 100);
            makeStale(id);
            ids.add(id);
        }
        List<Callable<Integer>> racers = new ArrayList<>();
        for (long id : ids) {
            racers.add(() -> Api.pay(bearer, id, Api.newKey()).statusCode());
        }
        racers.add(() -> autoClose.closeStaleOrders().await().indefinitely());

        List<Integer> answers = Concurrently.run(racers);

        int paid = 0;
        for (int i = 0; i < ids.size(); i++) {
            String status = db.orderStatus(ids.get(i));
            if (answers.get(i) == 201) {
                assertEquals("PAID", status, "a payment that was acknowledged is never closed");
                assertEquals(1, db.payments(ids.get(i)));
                paid++;
            } else {
                assertEquals(409, answers.get(i), "a payment that lost, lost to the auto-close");
                assertEquals("CLOSED", status);
                assertEquals(0, db.payments(ids.get(i)));
            }
        }
        assertEquals(1_000_000 - 100L * paid, db.balance(user));
        System.out.printf("auto-close race: %d of %d orders paid, %d closed%n", paid, ids.size(), ids.size() - paid);
    }

    private void makeStale(long id) {
        db.update("UPDATE orders SET created_at = NOW(6) - INTERVAL 2 HOUR WHERE id = ?", id);
    }
}
