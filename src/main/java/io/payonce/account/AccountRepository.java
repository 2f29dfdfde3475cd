package io.payonce.account;

import io.payonce.db.UtcTimes;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.ArrayList;
import java.util.List;

/** SQL for accounts and their ledger. */
@ApplicationScoped
public class AccountRepository {

    /** The primary key on user_id makes opening an account twice impossible. */
    private static final String INSERT = "INSERT INTO account (user_id, balance, currency) VALUES (?, 0, ?)";

    private static final String SELECT = "SELECT user_id, balance, currency, created_at FROM account WHERE user_id = ?";

    /** Keyset pagination over (user_id, id): no OFFSET scans however deep a client pages. */
    private static final String SELECT_ENTRIES = """
            SELECT id, delta, balance_after, ref_type, ref_id, created_at
            FROM account_entry
            WHERE user_id = ? AND id < ?
            ORDER BY id DESC
            LIMIT ?""";

    /** The conditional deduct: a balance never goes below zero, however many payments race for it. */
    private static final String DEBIT = """
            UPDATE account SET balance = balance - ?
            WHERE user_id = ? AND currency = ? AND balance >= ?""";

    private static final String CREDIT = """
            UPDATE account SET balance = balance + ?
            WHERE user_id = ? AND currency = ?""";

    /**
     * The ledger line, with the balance this transaction just wrote. UNIQUE(user_id, ref_type, ref_id)
     * refuses a second entry for one payment, refund or deposit reference.
     *
     * <p>One row of VALUES, the balance read by a subquery: InnoDB counts an INSERT ... SELECT as a
     * bulk insert, which takes account_entry's table-level AUTO-INC lock for the statement
     * (innodb_autoinc_lock_mode 1, MariaDB's default) instead of the brief mutex a single-row insert
     * takes. Concurrent pays then queued on that lock, and a pipelined pay, which waits for no lock,
     * failed on it ("Failed to read auto-increment value", 1467) and ran again one statement at a time:
     * 38 % of them at 32 clients on the benchmark's database.
     */
    private static final String APPEND_ENTRY = """
            INSERT INTO account_entry (user_id, delta, balance_after, ref_type, ref_id)
            VALUES (?, ?, (SELECT balance FROM account WHERE user_id = ?), ?, ?)""";

    private final Pool pool;

    public AccountRepository(Pool pool) {
        this.pool = pool;
    }

    public Uni<Void> insert(String userId, String currency) {
        return pool.preparedQuery(INSERT).execute(Tuple.of(userId, currency)).replaceWithVoid();
    }

    public Uni<Account> find(String userId) {
        return find(pool, userId);
    }

    public Uni<Account> find(SqlClient client, String userId) {
        return client.preparedQuery(SELECT).execute(Tuple.of(userId)).map(rows -> {
            var iterator = rows.iterator();
            return iterator.hasNext() ? account(iterator.next()) : null;
        });
    }

    /** True when the account held enough and was debited. */
    Uni<Boolean> debit(SqlClient tx, String userId, String currency, long amount) {
        return tx.preparedQuery(DEBIT).execute(Tuple.of(amount, userId, currency, amount)).map(rows -> rows.rowCount() == 1);
    }

    /** True when the account exists in that currency and was credited. */
    Uni<Boolean> credit(SqlClient tx, String userId, String currency, long amount) {
        return tx.preparedQuery(CREDIT).execute(Tuple.of(amount, userId, currency)).map(rows -> rows.rowCount() == 1);
    }

    Uni<Void> appendEntry(SqlClient tx, String userId, long delta, EntryType type, String refId) {
        return tx.preparedQuery(APPEND_ENTRY).execute(Tuple.of(userId, delta, userId, type.name(), refId)).replaceWithVoid();
    }

    public Uni<List<Entry>> entries(String userId, long beforeId, int limit) {
        return pool.preparedQuery(SELECT_ENTRIES).execute(Tuple.of(userId, beforeId, limit))
                .map(AccountRepository::entries);
    }

    private static Account account(Row row) {
        return new Account(row.getString("user_id"), row.getLong("balance"), row.getString("currency"),
                UtcTimes.instant(row, "created_at"));
    }

    private static List<Entry> entries(RowSet<Row> rows) {
        List<Entry> entries = new ArrayList<>(rows.rowCount());
        for (Row row : rows) {
            entries.add(new Entry(row.getLong("id"), row.getLong("delta"), row.getLong("balance_after"),
                    row.getString("ref_type"), row.getString("ref_id"), UtcTimes.instant(row, "created_at")));
        }
        return entries;
    }
}
