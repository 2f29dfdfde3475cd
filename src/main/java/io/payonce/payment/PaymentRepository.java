package io.payonce.payment;

import io.payonce.db.Rows;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * The read every pay path shares: an order's live payment, whichever method made it. Each path
 * writes its payments with SQL of its own; every statement runs in the caller's transaction.
 */
@ApplicationScoped
class PaymentRepository {

    /** Through UNIQUE(live_order_id): the order's payment that is not declined. */
    private static final String SELECT_PAYMENT = "SELECT id, order_id, amount, currency, method, phase FROM pay_record WHERE live_order_id = ?";

    Uni<PaymentView> findPayment(SqlClient tx, long orderId) {
        return tx.preparedQuery(SELECT_PAYMENT).execute(Tuple.of(orderId)).map(rows -> Rows.first(rows, row -> new PaymentView(row.getLong("id"),
                row.getLong("order_id"), row.getLong("amount"), row.getString("currency"), PaymentMethod.valueOf(row.getString("method")),
                PaymentPhase.valueOf(row.getString("phase")))));
    }
}
