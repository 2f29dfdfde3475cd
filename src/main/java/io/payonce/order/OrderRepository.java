package io.payonce.order;

import io.payonce.db.Rows;
import io.payonce.db.UtcTimes;
import io.payonce.idempotency.KeyedWrite;
import io.payonce.idempotency.RecordJoin;
import io.payonce.idempotency.WithRecord;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.mysqlclient.MySQLClient;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;

/** SQL for orders. Status only ever changes by compare-and-set on the status it is expected to have. */
@ApplicationScoped
public class OrderRepository {

    /** Qualified by the alias {@code o}, so that a statement may join another table whose columns share these names. */
    private static final String COLUMNS = """
            o.id, o.order_sn, o.user_id, o.amount, o.currency, o.status, o.refunded_amount, o.created_at, o.updated_at""";

    /** UNIQUE(user_id, order_sn) and UNIQUE(submit_token) refuse a second row for one business order or one form. */
    private static final String INSERT = """
            INSERT INTO orders (order_sn, user_id, amount, currency, status, submit_token)
            VALUES (?, ?, ?, ?, 'UNPAID', ?)""";

    private static final String SELECT_BY_ID = "SELECT " + COLUMNS + " FROM orders o WHERE o.id = ?";

    /** The order and, in the same statement, a keyed write's record: the one read of a pay before its lock. */
    private static final String SELECT_BY_ID_WITH_RECORD =
            "SELECT " + COLUMNS + ", " + RecordJoin.COLUMNS + " FROM orders o " + RecordJoin.JOIN + " WHERE o.id = ?";

    /** Takes the order's row lock first, so that a transaction's later locks always come in the same order. */
    private static final String LOCK_BY_ID = SELECT_BY_ID + " FOR UPDATE";

    /** Order numbers are the user's own: UNIQUE(user_id, order_sn). */
    private static final String SELECT_BY_SN = "SELECT " + COLUMNS + " FROM orders o WHERE o.user_id = ? AND o.order_sn = ?";

    /** rowCount == 1 means this statement moved the order; InnoDB's row lock serializes racing writers. */
    private static final String COMPARE_AND_SET_STATUS = """
            UPDATE orders SET status = ? WHERE id = ? AND status = ?""";

    /**
     * The compare-and-set of a move back to UNPAID (a card payment declined, or settled not charged
     * by an operator), which stamps the move in the same statement: the auto-close delay runs from
     * here, so that the order stays payable with a new key, as the client's 402 invites, however long
     * the processor or the operator took.
     */
    private static final String COMPARE_AND_SET_UNPAID_AGAIN = """
            UPDATE orders SET status = 'UNPAID', unpaid_again_at = NOW(6) WHERE id = ? AND status = ?""";

    /**
     * The compare-and-set of a move to REFUNDED once refunds to the card add up to the amount, which
     * keeps the status it moved from: a refund the processor fails after it succeeded gives the order
     * back as it was ({@link #reverseRefund}). A refund to the balance is never reversed.
     */
    private static final String COMPARE_AND_SET_REFUNDED = """
            UPDATE orders SET refunded_from = status, status = 'REFUNDED' WHERE id = ? AND status = ?""";

    /**
     * Adds a refund to the order's total, moving it to REFUNDED when the total reaches the amount.
     * The cap is in the WHERE clause, so racing refunds can never together exceed the payment; the
     * status is assigned first because MySQL evaluates later assignments with earlier results.
     */
    private static final String ADD_REFUND = """
            UPDATE orders
            SET status = IF(refunded_amount + ? = amount, 'REFUNDED', status),
                refunded_amount = refunded_amount + ?
            WHERE id = ? AND status IN ('PAID', 'SHIPPED', 'COMPLETED') AND refunded_amount + ? <= amount""";

    /**
     * Reserves a card refund in the order's refunded total, within the same cap, while the refund
     * goes to the processor: racing refunds can never together exceed the payment, those still in
     * flight included. The status stays as it is: the order becomes REFUNDED only once the refunds
     * that make up its full amount have all succeeded.
     */
    private static final String RESERVE_REFUND = """
            UPDATE orders SET refunded_amount = refunded_amount + ?
            WHERE id = ? AND status IN ('PAID', 'SHIPPED', 'COMPLETED') AND refunded_amount + ? <= amount""";

    /** Gives back the reservation of a card refund that failed: nothing went back to the card. */
    private static final String RELEASE_REFUND = """
            UPDATE orders SET refunded_amount = refunded_amount - ? WHERE id = ? AND refunded_amount >= ?""";

    /**
     * Gives back the amount of a card refund the processor failed after it had succeeded: a REFUNDED
     * order becomes again what it was refunded from, or COMPLETED where no status was kept (refunded
     * in full by the release before this one), which lets no one ship it again and keeps it
     * refundable. The kept status is spent, so that a later move to REFUNDED by an instance that keeps
     * none never brings back an older one. Assigned in this order: MySQL evaluates later assignments
     * with earlier results.
     */
    private static final String REVERSE_REFUND = """
            UPDATE orders SET status = IF(status = 'REFUNDED', COALESCE(refunded_from, 'COMPLETED'), status),
                refunded_from = NULL,
                refunded_amount = refunded_amount - ?
            WHERE id = ? AND refunded_amount >= ?""";

    /**
     * Closes a batch of stale unpaid orders: UNPAID for longer than the delay since their last move
     * to UNPAID, their creation or a card payment giving them back (unpaid_again_at, always later
     * than created_at where set). The conditions are re-checked under the row lock, so an order that
     * a payment moved to PAID, or a decline gave back, a moment earlier is left alone, and vice versa.
     * orders_by_status_age (status, created_at) leads the scan: of the orders it reads, only those
     * given back within the delay are passed over.
     */
    private static final String CLOSE_STALE_UNPAID = """
            UPDATE orders SET status = 'CLOSED'
            WHERE status = 'UNPAID' AND created_at < NOW(6) - INTERVAL ? SECOND
              AND (unpaid_again_at IS NULL OR unpaid_again_at < NOW(6) - INTERVAL ? SECOND)
            ORDER BY created_at
            LIMIT ?""";

    private final Pool pool;

    public OrderRepository(Pool pool) {
        this.pool = pool;
    }

    public Uni<Long> insert(SqlClient client, NewOrder order, String submitToken) {
        return client.preparedQuery(INSERT)
                .execute(Tuple.of(order.orderSn(), order.userId(), order.amount(), order.currency(), submitToken))
                .map(rows -> rows.property(MySQLClient.LAST_INSERTED_ID));
    }

    /** Within a caller's transaction, so that it reads what that transaction wrote. */
    public Uni<Order> findById(SqlClient client, long id) {
        return client.preparedQuery(SELECT_BY_ID).execute(Tuple.of(id)).map(OrderRepository::single);
    }

    /** The order, or null, beside the write's record. */
    public Uni<WithRecord<Order>> findWithRecord(SqlClient client, long id, KeyedWrite write) {
        return client.preparedQuery(SELECT_BY_ID_WITH_RECORD).execute(RecordJoin.parameters(write).addLong(id)).map(rows -> RecordJoin.first(rows, OrderRepository::from));
    }

    public Uni<Order> lockById(SqlClient tx, long id) {
        return tx.preparedQuery(LOCK_BY_ID).execute(Tuple.of(id)).map(OrderRepository::single);
    }

    public Uni<Order> findBySn(SqlClient client, String userId, String orderSn) {
        return client.preparedQuery(SELECT_BY_SN).execute(Tuple.of(userId, orderSn)).map(OrderRepository::single);
    }

    /** A move back to UNPAID is stamped as well, whoever makes it: auto-close counts from it. */
    public Uni<Boolean> compareAndSetStatus(SqlClient client, long id, OrderStatus expected, OrderStatus next) {
        Uni<RowSet<Row>> moved = switch (next) {
            case UNPAID -> client.preparedQuery(COMPARE_AND_SET_UNPAID_AGAIN).execute(Tuple.of(id, expected.name()));
            case REFUNDED -> client.preparedQuery(COMPARE_AND_SET_REFUNDED).execute(Tuple.of(id, expected.name()));
            default -> client.preparedQuery(COMPARE_AND_SET_STATUS).execute(Tuple.of(next.name(), id, expected.name()));
        };
        return moved.map(rows -> rows.rowCount() == 1);
    }

    /** True when the refund fitted under the cap and was added. */
    public Uni<Boolean> addRefund(SqlClient tx, long id, long amount) {
        return tx.preparedQuery(ADD_REFUND).execute(Tuple.of(amount, amount, id, amount)).map(rows -> rows.rowCount() == 1);
    }

    /** True when the card refund fitted under the cap and its amount is now reserved. */
    public Uni<Boolean> reserveRefund(SqlClient tx, long id, long amount) {
        return tx.preparedQuery(RESERVE_REFUND).execute(Tuple.of(amount, id, amount)).map(rows -> rows.rowCount() == 1);
    }

    /** True when the reservation of a failed card refund was given back. */
    public Uni<Boolean> releaseRefund(SqlClient tx, long id, long amount) {
        return tx.preparedQuery(RELEASE_REFUND).execute(Tuple.of(amount, id, amount)).map(rows -> rows.rowCount() == 1);
    }

    /** True when the amount of a card refund the processor failed after it succeeded was given back; under the order's row lock. */
    public Uni<Boolean> reverseRefund(SqlClient tx, long id, long amount) {
        return tx.preparedQuery(REVERSE_REFUND).execute(Tuple.of(amount, id, amount)).map(rows -> rows.rowCount() == 1);
    }

    /** Closes at most {@code limit} orders UNPAID for longer than {@code age}; returns how many it closed. */
    public Uni<Integer> closeStaleUnpaid(Duration age, int limit) {
        return pool.preparedQuery(CLOSE_STALE_UNPAID)
                .execute(Tuple.of(age.toSeconds(), age.toSeconds(), limit))
                .map(RowSet::rowCount);
    }

    private static Order single(RowSet<Row> rows) {
        Row row = Rows.first(rows);
        return row == null ? null : from(row);
    }

    private static Order from(Row row) {
        return new Order(
                row.getLong("id"),
                row.getString("order_sn"),
                row.getString("user_id"),
                row.getLong("amount"),
                row.getString("currency"),
                OrderStatus.valueOf(row.getString("status")),
                row.getLong("refunded_amount"),
                UtcTimes.instant(row, "created_at"),
                UtcTimes.instant(row, "updated_at"));
    }
}
