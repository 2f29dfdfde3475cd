package io.payonce.db;

import com.fasterxml.jackson.core.JsonParseException;
import io.vertx.core.Vertx;
import io.vertx.core.http.ConnectionPoolTooBusyException;
import io.vertx.core.impl.NoStackTraceThrowable;
import io.vertx.mysqlclient.MySQLBuilder;
import io.vertx.mysqlclient.MySQLConnectOptions;
import io.vertx.mysqlclient.MySQLException;
import io.vertx.redis.client.impl.types.ErrorType;
import io.vertx.sqlclient.ClosedConnectionException;
import io.vertx.sqlclient.Pool;
import org.eclipse.microprofile.faulttolerance.exceptions.CircuitBreakerOpenException;
import org.eclipse.microprofile.faulttolerance.exceptions.TimeoutException;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ConnectException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Only a store that failed for now is "retry later"; a bug must surface as a bug, not as 503 forever. */
class DependencyFailureTest {

    @Test
    void deadlocksLockWaitsAndTimeBoundsAreTransient() {
        assertTrue(DependencyFailure.isTransient(mysql(1213)));
        assertTrue(DependencyFailure.isTransient(mysql(1205)));
        assertTrue(DependencyFailure.isTransient(mysql(1969)));
        assertTrue(DependencyFailure.isTransient(new IllegalStateException("wrapped", mysql(1205))));
    }

    /**
     * A Galera node that has left the primary component, or rejects queries, answers 1047; the unit
     * proof of what GaleraIT shows on a cluster, where the writer is told to reject queries.
     */
    @Test
    void aGaleraNodeNotPreparedIsTransient() {
        MySQLException notPrepared = new MySQLException("WSREP has not yet prepared node for application use", 1047, "08S01");
        assertTrue(DependencyFailure.isTransient(notPrepared));
        assertTrue(DependencyFailure.isWorthRetrying(notPrepared));
    }

    /** The same number from a proxy that does not know a command is a bug: 503 forever would hide it. */
    @Test
    void anUnknownCommandIsNot() {
        assertFalse(DependencyFailure.isTransient(new MySQLException("Unknown command", 1047, "08S01")));
    }

    /** A Galera node that left the primary component while it committed: the retry's claim finds what did commit. */
    @Test
    void anErrorDuringCommitIsTransient() {
        assertTrue(DependencyFailure.isTransient(mysql(1180)));
    }

    @Test
    void otherDatabaseErrorsAreNot() {
        assertFalse(DependencyFailure.isTransient(mysql(1062)));
        assertFalse(DependencyFailure.isTransient(mysql(1406)));
        assertFalse(DependencyFailure.isTransient(mysql(1064)));
    }

    /**
     * No auto-increment value: a wait for a table's AUTO-INC lock that may pass, so worth a retry, or
     * a counter at its maximum, which would not: not transient, so that once the retries are spent it
     * surfaces as the failure it then is, and a command is dead-lettered, not requeued forever.
     */
    @Test
    void noAutoIncrementValueIsRetriedButNotTransient() {
        assertTrue(DependencyFailure.isWorthRetrying(mysql(1467)));
        assertTrue(DependencyFailure.isWorthRetrying(new IllegalStateException("wrapped", mysql(1467))));
        assertFalse(DependencyFailure.isTransient(mysql(1467)));
        assertFalse(SqlErrors.isLockWaitTimeout(mysql(1467)), "not a busy key's row");
    }

    @Test
    void connectionFailuresOfTheDatabaseAndRedisAreTransient() {
        assertTrue(DependencyFailure.isTransient(new ConnectException("refused")));
        assertTrue(DependencyFailure.isTransient(ClosedConnectionException.INSTANCE));
        assertTrue(DependencyFailure.isTransient(new ConnectionPoolTooBusyException("queue full")));
        assertTrue(DependencyFailure.isTransient(ErrorType.create("CONNECTION_CLOSED")));
        assertTrue(DependencyFailure.isTransient(new NoStackTraceThrowable("Connection is closed")));
        assertTrue(DependencyFailure.isTransient(new TimeoutException("Timeout on SubmitTokens#consume")));
        assertTrue(DependencyFailure.isTransient(new CircuitBreakerOpenException("open")));
    }

    /**
     * What a statement meets when the instance stops under it: the pool closed. Another instance
     * answers it, so it is "retry later", never a 500 or a dead-lettered command. Vert.x's own pool,
     * closed before it ever connects, says so in its own words.
     */
    @Test
    void aStatementOnAClosedPoolIsTransient() throws Exception {
        Vertx vertx = Vertx.vertx();
        try {
            Pool pool = MySQLBuilder.pool().connectingTo(new MySQLConnectOptions().setPort(1)).using(vertx).build();
            pool.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            CompletableFuture<Throwable> failure = new CompletableFuture<>();
            pool.query("SELECT 1").execute().onComplete(done -> failure.complete(done.cause()));
            Throwable closed = failure.get(10, TimeUnit.SECONDS);
            assertTrue(DependencyFailure.isTransient(closed), String.valueOf(closed));
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        }
    }

    @Test
    void aJsonOrOtherInputOutputBugIsNotTransient() {
        assertFalse(DependencyFailure.isTransient(new JsonParseException(null, "bad")));
        assertFalse(DependencyFailure.isTransient(new UncheckedIOException(new IOException("disk"))));
        assertFalse(DependencyFailure.isTransient(new IllegalStateException("bug")));
        assertFalse(DependencyFailure.isTransient(ErrorType.create("WRONGTYPE Operation against a key holding the wrong kind of value")));
        assertFalse(DependencyFailure.isTransient(new NoStackTraceThrowable("something else")));
    }

    private static MySQLException mysql(int code) {
        return new MySQLException("error " + code, code, "HY000");
    }
}
