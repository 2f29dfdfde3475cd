package io.payonce.support;

import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;

/** Direct SQL for tests: to set up states the API cannot reach yet and to check what was written. */
@ApplicationScoped
public class Database {

    private static final Duration WAIT = Duration.ofSeconds(30);

    private final Pool pool;

    public Database(Pool pool) {
        this.pool = pool;
    }

    public long count(String sql, Object... args) {
        Row row = pool.preparedQuery(sql).execute(Tuple.from(args)).await().atMost(WAIT).iterator().next();
        return row.getLong(0);
    }

    public String string(String sql, Object... args) {
        return pool.preparedQuery(sql).execute(Tuple.from(args)).await().atMost(WAIT).iterator().next().getString(0);
    }

    public int update(String sql, Object... args) {
        return pool.preparedQuery(sql).execute(Tuple.from(args)).await().atMost(WAIT).rowCount();
    }

    public long balance(String userId) {
        return count("SELECT balance FROM account WHERE user_id = ?", userId);
    }

    public long entries(String userId) {
        return count("SELECT COUNT(*) FROM account_entry WHERE user_id = ?", userId);
    }

    public long payments(long orderId) {
        return count("SELECT COUNT(*) FROM pay_record WHERE order_id = ?", orderId);
    }

    public String orderStatus(long orderId) {
        return string("SELECT status FROM orders WHERE id = ?", orderId);
    }

    /** Rows any table holds for a user; used to prove that a rejected request wrote nothing. */
    public long rowsOwnedBy(String userId) {
        return count("""
                SELECT (SELECT COUNT(*) FROM orders WHERE user_id = ?)
                     + (SELECT COUNT(*) FROM account WHERE user_id = ?)
                     + (SELECT COUNT(*) FROM account_entry WHERE user_id = ?)""", userId, userId, userId);
    }
}
