package io.payonce.payment;

import io.payonce.idempotency.IdempotencyKey;
import io.payonce.order.Order;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.mysqlclient.MySQLClient;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

/** SQL for payments and refunds; every statement runs in the caller's transaction. */
@ApplicationScoped
class PaymentRepository {

    /** UNIQUE(live_order_id): whatever got past the lock, the key and the status CAS, an order is paid once. */
    private static final String INSERT_PAYMENT = """
            INSERT INTO pay_record (order_id, user_id, amount, currency, idem_key) VALUES (?, ?, ?, ?, ?)""";

    /** Through UNIQUE(live_order_id): the order's payment that is not declined. */
    private static final String SELECT_PAYMENT = "SELECT id, order_id, amount, currency, method, phase FROM pay_record WHERE live_order_id = ?";

    /** UNIQUE(order_id, refund_no): a refund number refunds once. */
    private static final String INSERT_REFUND = """
            INSERT INTO refund_record (order_id, refund_no, user_id, amount) VALUES (?, ?, ?, ?)""";

    private static final String SELECT_REFUND = """
            SELECT id, order_id, refund_no, amount FROM refund_record WHERE order_id = ? AND refund_no = ?""";

    Uni<Long> insertPayment(SqlClient tx, Order order, IdempotencyKey key) {
        return tx.preparedQuery(INSERT_PAYMENT)
                .execute(Tuple.of(order.id(), order.userId(), order.amount(), order.currency(), key.value()))
                .map(rows -> rows.property(MySQLClient.LAST_INSERTED_ID));
    }

    Uni<Payment> findPayment(SqlClient tx, long orderId) {
        return tx.preparedQuery(SELECT_PAYMENT).execute(Tuple.of(orderId)).map(rows -> {
            Row row = first(rows);
            return row == null ? null
                    : new Payment(row.getLong("id"), row.getLong("order_id"), row.getLong("amount"), row.getString("currency"),
                    PaymentMethod.valueOf(row.getString("method")), PaymentPhase.valueOf(row.getString("phase")));
        });
    }

    Uni<Refund> insertRefund(SqlClient tx, Order order, String refundNo, long amount) {
        return tx.preparedQuery(INSERT_REFUND)
                .execute(Tuple.of(order.id(), refundNo, order.userId(), amount))
                .map(rows -> new Refund(rows.property(MySQLClient.LAST_INSERTED_ID), order.id(), refundNo, amount));
    }

    Uni<Refund> findRefund(SqlClient tx, long orderId, String refundNo) {
        return tx.preparedQuery(SELECT_REFUND).execute(Tuple.of(orderId, refundNo)).map(rows -> {
            Row row = first(rows);
            return row == null ? null
                    : new Refund(row.getLong("id"), row.getLong("order_id"), row.getString("refund_no"), row.getLong("amount"));
        });
    }

    private static Row first(RowSet<Row> rows) {
        var iterator = rows.iterator();
        return iterator.hasNext() ? iterator.next() : null;
    }
}
