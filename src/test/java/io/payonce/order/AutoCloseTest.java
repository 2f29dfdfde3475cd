package io.payonce.order;

import io.payonce.support.Api;
import io.payonce.support.Buyer;
import io.payonce.support.Concurrently;
import io.payonce.support.Database;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

@QuarkusTest
@ExtendWith(LedgerInvariants.class)
class AutoCloseTest {

    private final Database db = Database.forTests();

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
        db.update("UPDATE orders SET status = 'PAID' WHERE id = ? AND status = 'UNPAID'", stalePaid);

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

    /**
     * Pays racing the auto-close on the same stale orders: each order ends either paid (its pay
     * answered 201) or closed (its pay lost with ILLEGAL_TRANSITION, currentStatus CLOSED), and the
     * job closed exactly the orders that were not paid. Rounds repeat until one has both outcomes,
     * so that the race really happened.
     */
    @Test
    void aPaymentInTheSameInstantAsTheAutoCloseIsNeverClosed() throws Exception {
        Buyer buyer = Buyer.withBalance(1_000_000);
        long spent = 0;
        boolean mixed = false;
        for (int round = 0; round < 10 && !mixed; round++) {
            RaceOutcome outcome = race(buyer.bearer(), 30);
            spent += 100L * outcome.paid();
            mixed = outcome.paid() > 0 && outcome.closed() > 0;
            System.out.printf("auto-close race, round %d: %d of 30 orders paid, %d closed%n", round, outcome.paid(), outcome.closed());
        }
        assertTrue(mixed, "at least one round had both paid and closed orders");
        assertEquals(1_000_000 - spent, db.balance(buyer.userId()));
    }

    record RaceOutcome(int paid, int closed) {
    }

    private RaceOutcome race(String bearer, int orderCount) throws Exception {
        List<Long> ids = new ArrayList<>();
        for (int i = 0; i < orderCount; i++) {
            long id = Api.newOrder(bearer, 100);
            makeStale(id);
            ids.add(id);
        }
        List<Callable<Object>> racers = new ArrayList<>();
        for (long id : ids) {
            racers.add(() -> Api.pay(bearer, id, Api.newKey()));
        }
        racers.add(() -> autoClose.closeStaleOrders().await().indefinitely());

        List<Object> answers = Concurrently.run(racers);

        int paid = 0;
        for (int i = 0; i < ids.size(); i++) {
            Response answer = (Response) answers.get(i);
            String status = db.orderStatus(ids.get(i));
            if (answer.statusCode() == 201) {
                assertEquals("PAID", status, "a payment that was acknowledged is never closed");
                assertEquals(1, db.payments(ids.get(i)));
                paid++;
            } else {
                assertEquals(409, answer.statusCode(), answer.asString());
                assertEquals("ILLEGAL_TRANSITION", answer.jsonPath().getString("code"), "a payment that lost, lost to the auto-close");
                assertEquals("CLOSED", answer.jsonPath().getString("currentStatus"));
                assertEquals("CLOSED", status);
                assertEquals(0, db.payments(ids.get(i)));
            }
        }
        int closedByTheJob = (Integer) answers.get(ids.size());
        assertEquals(ids.size() - paid, closedByTheJob, "the job closed exactly the orders that were not paid");
        return new RaceOutcome(paid, closedByTheJob);
    }

    private void makeStale(long id) {
        db.update("UPDATE orders SET created_at = NOW(6) - INTERVAL 2 HOUR WHERE id = ?", id);
    }
}
