package io.payonce.payment;

import io.payonce.processor.ProcessorSimulator;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Api;
import io.payonce.support.Buyer;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Database;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The asynchronous-replica drill (docs/operations/scaling.md, "Running on a Galera cluster"): the
 * database goes back a few seconds, as it does when a primary fails over to an asynchronous replica that
 * had not yet applied its last commits, or is restored from a backup. Played here by restoring the order
 * and its payer, in every table money touches, to a backup taken just before an acknowledged pay. The
 * pay and its key's record are gone with the rest; what its client's retry with the same key then does
 * is what a team signs up for by running payonce on such a database.
 */
@QuarkusTest
class RolledBackDatabaseTest {

    private final Database db = Database.forTests();

    /**
     * A balance pay: the debit was rolled back with the payment, so the retry debits the account once,
     * in the database that survived; it is a first pay there, not a replay. Without a retry the order
     * stays UNPAID and the money undebited, though its client was told 201: the loss an asynchronous
     * failover costs, which a synchronous cluster does not.
     */
    @Test
    void anAcknowledgedBalancePayRolledBackIsPaidOnceByItsRetry() {
        Buyer buyer = Buyer.withBalance(5000);
        long order = buyer.newOrder(1200);
        String key = Api.newKey();
        String backup = db.backUpOrder(order);

        Response acknowledged = Api.pay(buyer.bearer(), order, key);
        db.restore(backup);

        assertEquals(201, acknowledged.statusCode(), acknowledged.asString());
        assertEquals(0, db.payments(order), "the rolled back database holds no payment");
        assertEquals("UNPAID", db.orderStatus(order));
        assertEquals(5000, db.balance(buyer.userId()), "nor the debit");

        Response retry = Api.pay(buyer.bearer(), order, key);

        assertEquals(201, retry.statusCode(), retry.asString());
        assertNull(retry.header("Idempotent-Replayed"), "a first pay in the database that survived");
        assertEquals(1, db.payments(order));
        assertEquals(3800, db.balance(buyer.userId()), "debited once");
        assertEquals(2, db.entries(buyer.userId()), "the deposit and one payment line");
    }

    /**
     * A card pay: the processor charged the card and payonce acknowledged it, then the database lost
     * both. The retry derives the same processor key from the client's key, meets the first charge and
     * records it: the card is charged once.
     */
    @Test
    void anAcknowledgedCardPayRolledBackIsRecordedByItsRetryWithoutASecondCharge() {
        Checkout buyer = Buyer.withBalance(0).checkout(1500);
        String backup = db.backUpOrder(buyer.order());

        Response acknowledged = buyer.payByCard("tok_visa");
        db.restore(backup);

        assertEquals(201, acknowledged.statusCode(), acknowledged.asString());
        assertEquals(0, db.payments(buyer.order()), "the rolled back database holds no payment");

        Response retry = buyer.payByCard("tok_visa");

        assertEquals(201, retry.statusCode(), retry.asString());
        assertEquals("SUCCEEDED", retry.jsonPath().getString("phase"));
        Response payment = Api.as(buyer.bearer()).get("/payments/" + retry.jsonPath().getLong("paymentId"));
        assertEquals(processor().chargeUnder(payment.jsonPath().getString("processorKey")).id(), payment.jsonPath().getString("chargeId"),
                "the first charge, recorded");
        assertEquals(1, processor().charges().stream().filter(charge -> charge.reference().equals("order-" + buyer.order())).count(),
                "one charge of the card");
        assertEquals(1, db.payments(buyer.order()));
        assertEquals("PAID", db.orderStatus(buyer.order()));
    }

    private static ProcessorSimulator processor() {
        return ProcessorSimulatorResource.simulator();
    }
}
