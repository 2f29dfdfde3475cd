package io.payonce.payment.card;

import io.payonce.db.Rows;
import io.payonce.errors.ApiException;
import io.payonce.idempotency.IdempotencyKey;
import io.payonce.order.Order;
import io.payonce.payment.PaymentPhase;
import io.payonce.payment.operation.OperationRows;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.mysqlclient.MySQLClient;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;

/**
 * SQL for card payments: the lifecycle's statements on {@code pay_record} ({@link OperationRows}),
 * where the attempts are {@code charge_attempts}, SENT is CHARGE_SENT and FAILED is DECLINED, and the
 * card's own: the first insert and the reads by order and key, and of a decline.
 */
@ApplicationScoped
class CardPaymentRepository extends OperationRows<CardPayment> {

    static final String COLUMNS = "p.id, p.order_id, p.user_id, p.amount, p.currency, p.phase, p.idem_key, p.card_token, p.processor_key, "
            + "p.processor_charge_id, "
            + "p.charge_attempts, TIMESTAMPDIFF(MICROSECOND, p.first_sent_at, NOW(6)) AS sent_micros_ago";

    private static final Table TABLE = new Table("pay_record", "p", "SELECT " + COLUMNS + " FROM pay_record p", "charge_attempts",
            "CHARGE_SENT", "DECLINED", "processor_charge_id", "decline_code", "payment_phase", "payment_id");

    /**
     * UNIQUE(live_order_id): an order has at most one payment that is not declined.
     * UNIQUE(processor_key): one payment row per key at the processor. The key is derived from the
     * request (io.payonce.processor.ProcessorKeys); a payment begun while keys were random keeps its
     * random "payonce-" key on its row, and every later call under it reads it from there.
     */
    private static final String INSERT_STARTED = """
            INSERT INTO pay_record (order_id, user_id, amount, currency, method, phase, idem_key, card_token, processor_key, busy_until,
                leased_until)
            VALUES (?, ?, ?, ?, 'CARD', 'STARTED', ?, ?, ?, NOW(6) + INTERVAL ? MICROSECOND, NOW(6) + INTERVAL ? MICROSECOND)""";

    private static final String SELECT_BY_ORDER_AND_KEY = "SELECT " + COLUMNS + " FROM pay_record p "
            + "WHERE p.order_id = ? AND p.idem_key = ? AND p.method = 'CARD' ORDER BY p.id DESC LIMIT 1";

    /** Through UNIQUE(processor_key); only a declined payment leaves its order payable, under the same key again. */
    private static final String SELECT_DECLINED_BY_PROCESSOR_KEY = "SELECT id, decline_code FROM pay_record "
            + "WHERE processor_key = ? AND phase = 'DECLINED'";

    CardPaymentRepository() {
        super(TABLE, CardPaymentRepository::from);
    }

    Uni<CardPayment> insertStarted(SqlClient tx, Order order, IdempotencyKey key, String cardToken, String processorKey, Duration lease) {
        return tx.preparedQuery(INSERT_STARTED)
                .execute(Tuple.of(order.id(), order.userId(), order.amount(), order.currency(), key.value(), cardToken)
                        .addString(processorKey).addLong(micros(lease)).addLong(micros(lease)))
                .map(rows -> new CardPayment(rows.property(MySQLClient.LAST_INSERTED_ID), order.id(), order.userId(), order.amount(),
                        order.currency(), PaymentPhase.STARTED, key, cardToken, processorKey, null, null, 0));
    }

    /** The 402 of the declined payment made under {@code processorKey}, or null. */
    Uni<ApiException> findDeclined(SqlClient client, String processorKey) {
        return client.preparedQuery(SELECT_DECLINED_BY_PROCESSOR_KEY).execute(Tuple.of(processorKey))
                .map(rows -> Rows.first(rows, row -> CardPayment.declined(row.getLong("id"), row.getString("decline_code"))));
    }

    Uni<CardPayment> findByOrderAndKey(SqlClient client, long orderId, IdempotencyKey key) {
        return client.preparedQuery(SELECT_BY_ORDER_AND_KEY).execute(Tuple.of(orderId, key.value())).map(this::single);
    }

    /** A payment from a row of {@link #COLUMNS}. */
    static CardPayment from(Row row) {
        Long sentMicrosAgo = row.getLong("sent_micros_ago");
        return new CardPayment(row.getLong("id"), row.getLong("order_id"), row.getString("user_id"), row.getLong("amount"),
                row.getString("currency"), PaymentPhase.valueOf(row.getString("phase")), new IdempotencyKey(row.getString("idem_key")),
                row.getString("card_token"), row.getString("processor_key"), row.getString("processor_charge_id"),
                sentMicrosAgo == null ? null : Duration.ofNanos(sentMicrosAgo * 1000), row.getInteger("charge_attempts"));
    }
}
