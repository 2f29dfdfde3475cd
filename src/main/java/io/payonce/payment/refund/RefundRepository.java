package io.payonce.payment.refund;

import io.payonce.db.Rows;
import io.payonce.order.Order;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.mysqlclient.MySQLClient;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

/** SQL for the refunds table; every statement runs in the caller's transaction. */
@ApplicationScoped
class RefundRepository {

    /** UNIQUE(order_id, refund_no): a refund number refunds once. */
    private static final String INSERT_REFUND = """
            INSERT INTO refund_record (order_id, refund_no, user_id, amount) VALUES (?, ?, ?, ?)""";

    private static final String SELECT_REFUND = """
            SELECT id, order_id, refund_no, amount FROM refund_record WHERE order_id = ? AND refund_no = ?""";

    Uni<Refund> insertRefund(SqlClient tx, Order order, String refundNo, long amount) {
        return tx.preparedQuery(INSERT_REFUND)
                .execute(Tuple.of(order.id(), refundNo, order.userId(), amount))
                .map(rows -> new Refund(rows.property(MySQLClient.LAST_INSERTED_ID), order.id(), refundNo, amount));
    }

    Uni<Refund> findRefund(SqlClient tx, long orderId, String refundNo) {
        return tx.preparedQuery(SELECT_REFUND).execute(Tuple.of(orderId, refundNo)).map(rows -> {
            Row row = Rows.first(rows);
            return row == null ? null
                    : new Refund(row.getLong("id"), row.getLong("order_id"), row.getString("refund_no"), row.getLong("amount"));
        });
    }
}
