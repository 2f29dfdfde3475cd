package io.payonce.payment.refund;

import io.payonce.db.Rows;
import io.payonce.order.Order;
import io.payonce.payment.PaymentMethod;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.mysqlclient.MySQLClient;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

/** SQL for the refunds table that every refund shares, and for refunds to the balance; every statement runs in the caller's transaction. */
@ApplicationScoped
class RefundRepository {

    /** UNIQUE(order_id, refund_no): a refund number refunds once. A refund to the balance is SUCCEEDED from this first commit. */
    private static final String INSERT_REFUND = """
            INSERT INTO refund_record (order_id, refund_no, user_id, amount) VALUES (?, ?, ?, ?)""";

    private static final String SELECT_REFUND = """
            SELECT id, order_id, refund_no, amount, method, phase, failure_code FROM refund_record WHERE order_id = ? AND refund_no = ?""";

    /**
     * Through UNIQUE(live_order_id): how the order was paid, once its payment succeeded, and the
     * processor's charge a refund to the card names.
     */
    private static final String SELECT_PAYMENT = """
            SELECT method, processor_charge_id FROM pay_record WHERE live_order_id = ? AND phase = 'SUCCEEDED'""";

    Uni<Refund> insertRefund(SqlClient tx, Order order, String refundNo, long amount) {
        return tx.preparedQuery(INSERT_REFUND)
                .execute(Tuple.of(order.id(), refundNo, order.userId(), amount))
                .map(rows -> Refund.toBalance(rows.property(MySQLClient.LAST_INSERTED_ID), order.id(), refundNo, amount));
    }

    Uni<Refund> findRefund(SqlClient tx, long orderId, String refundNo) {
        return tx.preparedQuery(SELECT_REFUND).execute(Tuple.of(orderId, refundNo)).map(rows -> Rows.first(rows, row -> new Refund(row.getLong("id"),
                row.getLong("order_id"), row.getString("refund_no"), row.getLong("amount"), PaymentMethod.valueOf(row.getString("method")),
                RefundPhase.valueOf(row.getString("phase")), row.getString("failure_code"))));
    }

    /** How the order was paid, or null while it has no payment that succeeded. */
    Uni<PaidBy> findPayment(SqlClient tx, long orderId) {
        return tx.preparedQuery(SELECT_PAYMENT).execute(Tuple.of(orderId)).map(rows -> Rows.first(rows,
                row -> new PaidBy(PaymentMethod.valueOf(row.getString("method")), row.getString("processor_charge_id"))));
    }

    /** How an order was paid: {@code chargeId} is the processor's charge of a card payment, null for the balance. */
    record PaidBy(PaymentMethod method, String chargeId) {
    }
}
