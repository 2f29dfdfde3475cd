package io.payonce.payment.refund;

import io.payonce.idempotency.IdempotencyKey;
import io.payonce.order.Order;
import io.payonce.payment.operation.OperationRows;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.mysqlclient.MySQLClient;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;

/**
 * SQL for refunds to the card: the lifecycle's statements on {@code refund_record}
 * ({@link OperationRows}), in the lifecycle's own words, and the refund's own: the first insert, the
 * reads by order and refund number, and the order's refunds still unsettled.
 */
@ApplicationScoped
class CardRefundRepository extends OperationRows<CardRefund> {

    static final String COLUMNS = "r.id, r.order_id, r.user_id, r.refund_no, r.amount, o.currency, r.phase, r.idem_scope, r.idem_key, "
            + "r.processor_key, r.processor_charge_id, r.attempts, TIMESTAMPDIFF(MICROSECOND, r.first_sent_at, NOW(6)) AS sent_micros_ago, "
            + "r.processor_refund_id";

    /** A refund is in the order's currency, as its payment was. */
    static final String FROM = " FROM refund_record r JOIN orders o ON o.id = r.order_id ";

    private static final Table TABLE = new Table("refund_record", "r", "SELECT " + COLUMNS + FROM, "attempts", "SENT", "FAILED",
            "processor_refund_id", "failure_code", "refund_phase", "refund_id");

    /** UNIQUE(order_id, refund_no) and UNIQUE(processor_key): a refund number refunds once, at the processor too. */
    private static final String INSERT_STARTED = """
            INSERT INTO refund_record (order_id, refund_no, user_id, amount, method, phase, idem_scope, idem_key, processor_key,
                processor_charge_id, busy_until, leased_until)
            VALUES (?, ?, ?, ?, 'CARD', 'STARTED', ?, ?, ?, ?, NOW(6) + INTERVAL ? MICROSECOND, NOW(6) + INTERVAL ? MICROSECOND)""";

    private static final String SELECT_BY_ORDER_AND_NO = "SELECT " + COLUMNS + FROM
            + "WHERE r.order_id = ? AND r.refund_no = ? AND r.method = 'CARD'";

    private static final String COUNT_UNSETTLED_OF_ORDER = "SELECT COUNT(*) AS unsettled FROM refund_record "
            + "WHERE order_id = ? AND phase IN " + TABLE.unsettled();

    CardRefundRepository() {
        super(TABLE, CardRefundRepository::from);
    }

    Uni<CardRefund> insertStarted(SqlClient tx, Order order, String refundNo, long amount, String scope, IdempotencyKey key,
                                  String processorKey, String chargeId, Duration lease) {
        return tx.preparedQuery(INSERT_STARTED)
                .execute(Tuple.of(order.id(), refundNo, order.userId(), amount, scope, key.value()).addString(processorKey)
                        .addString(chargeId).addLong(micros(lease)).addLong(micros(lease)))
                .map(rows -> new CardRefund(rows.property(MySQLClient.LAST_INSERTED_ID), order.id(), order.userId(), refundNo, amount,
                        order.currency(), RefundPhase.STARTED, scope, key, processorKey, chargeId, 0, null, null));
    }

    Uni<CardRefund> findByOrderAndNo(SqlClient client, long orderId, String refundNo) {
        return client.preparedQuery(SELECT_BY_ORDER_AND_NO).execute(Tuple.of(orderId, refundNo)).map(this::single);
    }

    /** The order's refunds still waiting for the processor; read under the order's row lock, which every change of them takes first. */
    Uni<Long> countUnsettled(SqlClient tx, long orderId) {
        return tx.preparedQuery(COUNT_UNSETTLED_OF_ORDER).execute(Tuple.of(orderId)).map(rows -> rows.iterator().next().getLong("unsettled"));
    }

    static CardRefund from(Row row) {
        Long sentMicrosAgo = row.getLong("sent_micros_ago");
        return new CardRefund(row.getLong("id"), row.getLong("order_id"), row.getString("user_id"), row.getString("refund_no"),
                row.getLong("amount"), row.getString("currency"), RefundPhase.valueOf(row.getString("phase")), row.getString("idem_scope"),
                new IdempotencyKey(row.getString("idem_key")), row.getString("processor_key"), row.getString("processor_charge_id"),
                row.getInteger("attempts"), sentMicrosAgo == null ? null : Duration.ofNanos(sentMicrosAgo * 1000),
                row.getString("processor_refund_id"));
    }
}
