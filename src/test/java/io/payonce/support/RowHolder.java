package io.payonce.support;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Holds a row lock from a session of its own, outside payonce's pool and its time bounds, as
 * another application or a DBA's session would: to make payonce's statements wait on that row, at a
 * known point ({@link Database#awaitWaitingOnRow}, {@link LockWaits}), until the test lets go.
 */
public final class RowHolder {

    /**
     * The tables whose rows it holds, each with the key payonce locks it by: the names are written
     * into the statement, so never ones a caller made up.
     */
    private static final Map<String, String> KEYS = Map.of(
            "account", "user_id", "orders", "id", "pay_record", "id", "refund_record", "id");

    private RowHolder() {
    }

    /** Locks the user's account row; see {@link #holdUntil}. */
    public static CompletableFuture<Void> holdAccountRowUntil(Database db, String userId, CompletableFuture<Void> release)
            throws InterruptedException {
        return holdUntil(db, "account", userId, release);
    }

    /**
     * Locks the row of {@code table} (account, orders, pay_record or refund_record) whose key is
     * {@code key} and returns once it holds the lock; it lets go when {@code release} completes (30 s
     * at most), and the future it returns ends then.
     */
    public static CompletableFuture<Void> holdUntil(Database db, String table, Object key, CompletableFuture<Void> release)
            throws InterruptedException {
        String keyColumn = KEYS.get(table);
        if (keyColumn == null) {
            throw new IllegalArgumentException("not a table whose rows payonce locks: " + table);
        }
        CountDownLatch locked = new CountDownLatch(1);
        // A thread of its own: the common pool may have a single thread on two cores, and a sleeping holder would block it.
        ExecutorService holder = Executors.newSingleThreadExecutor();
        CompletableFuture<Void> released = CompletableFuture.runAsync(() -> {
            try (Connection connection = db.connect()) {
                connection.setAutoCommit(false);
                try (PreparedStatement lock = connection.prepareStatement(
                        "SELECT " + keyColumn + " FROM " + table + " WHERE " + keyColumn + " = ? FOR UPDATE")) {
                    lock.setObject(1, key);
                    lock.executeQuery().close();
                }
                locked.countDown();
                try {
                    release.get(30, TimeUnit.SECONDS);
                } finally {
                    connection.rollback();
                }
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }, holder);
        holder.shutdown();
        if (!locked.await(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the lock on the row " + key + " of " + table + " was not taken");
        }
        return released;
    }
}
