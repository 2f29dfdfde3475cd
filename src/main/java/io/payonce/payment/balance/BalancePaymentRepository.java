package io.payonce.payment.balance;

import io.payonce.idempotency.IdempotencyKey;
import io.payonce.order.Order;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.mysqlclient.MySQLClient;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

/** The balance payment's one write, in the caller's transaction. */
@ApplicationScoped
class BalancePaymentRepository {

    /** UNIQUE(live_order_id): whatever got past the lock, the key and the status CAS, an order is paid once. */
    private static final String INSERT_PAYMENT = """
            INSERT INTO pay_record (order_id, user_id, amount, currency, idem_key) VALUES (?, ?, ?, ?, ?)""";

    /** A payment SUCCEEDED from the start, by the balance (the table's defaults); its id. */
    Uni<Long> insertPayment(SqlClient tx, Order order, IdempotencyKey key) {
        return tx.preparedQuery(INSERT_PAYMENT)
                .execute(Tuple.of(order.id(), order.userId(), order.amount(), order.currency(), key.value()))
                .map(rows -> rows.property(MySQLClient.LAST_INSERTED_ID));
    }
}
