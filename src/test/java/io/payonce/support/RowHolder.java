package io.payonce.support;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

/**
 * Holds a row lock from a session of its own, outside payonce's pool and its time bounds, as
 * another application or a DBA's session would: to make payonce's statements wait on that row.
 */
public final class RowHolder {

    private RowHolder() {
    }

    /** Locks the user's account row and returns once it holds the lock; the future ends when it lets go. */
    public static CompletableFuture<Void> holdAccountRow(String userId, long millis) throws InterruptedException {
        return holdAccountRow(Database.forTests(), userId, millis);
    }

    public static CompletableFuture<Void> holdAccountRow(Database db, String userId, long millis) throws InterruptedException {
        return holdAccountRowUntil(db, userId, CompletableFuture.runAsync(() -> { }, CompletableFuture.delayedExecutor(millis, TimeUnit.MILLISECONDS)));
    }

    /** Locks the user's account row and returns once it holds the lock; it lets go when {@code release} completes (30 s at most). */
    public static CompletableFuture<Void> holdAccountRowUntil(Database db, String userId, CompletableFuture<Void> release)
            throws InterruptedException {
        CountDownLatch locked = new CountDownLatch(1);
        // A thread of its own: the common pool may have a single thread on two cores, and a sleeping holder would block it.
        ExecutorService holder = Executors.newSingleThreadExecutor();
        CompletableFuture<Void> released = CompletableFuture.runAsync(() -> {
            try (Connection connection = db.connect()) {
                connection.setAutoCommit(false);
                try (PreparedStatement lock = connection.prepareStatement("SELECT balance FROM account WHERE user_id = ? FOR UPDATE")) {
                    lock.setString(1, userId);
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
            throw new IllegalStateException("the account row lock was not taken");
        }
        return released;
    }
}
