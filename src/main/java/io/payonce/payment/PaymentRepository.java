package io.payonce.payment;

import io.payonce.db.Rows;
import io.payonce.idempotency.IdempotencyKey;
import io.payonce.order.Order;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.mysqlclient.MySQLClient;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

/** SQL for the payments table; every statement runs in the caller's transaction. */
@ApplicationScoped
public class PaymentRepository {

    /** UNIQUE(live_order_id): whatever got past the lock, the key and the status CAS, an order is paid once. */
    private static final String INSERT_PAYMENT = """
            INSERT INTO pay_record (order_id, user_id, amount, currency, idem_key) VALUES (?, ?, ?, ?, ?)""";

    /** Through UNIQUE(live_order_id): the order's payment that is not declined. */
    private static final String SELECT_PAYMENT = "SELECT id, order_id, amount, currency, method, phase FROM pay_record WHERE live_order_id = ?";

    public Uni<Long> insertPayment(SqlClient tx, Order order, IdempotencyKey key) {
        return tx.preparedQuery(INSERT_PAYMENT)
                .execute(Tuple.of(order.id(), order.userId(), order.amount(), order.currency(), key.value()))
                .map(rows -> rows.property(MySQLClient.LAST_INSERTED_ID));
    }

    Uni<Payment> findPayment(SqlClient tx, long orderId) {
        return tx.preparedQuery(SELECT_PAYMENT).execute(Tuple.of(orderId)).map(rows -> {
            Row row = Rows.first(rows);
            return row == null ? null
                    : new Payment(row.getLong("id"), row.getLong("order_id"), row.getLong("amount"), row.getString("currency"),
                    PaymentMethod.valueOf(row.getString("method")), PaymentPhase.valueOf(row.getString("phase")));
        });
    }
}
