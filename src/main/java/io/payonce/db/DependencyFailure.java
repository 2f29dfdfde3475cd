package io.payonce.db;

import io.payonce.redis.RedisErrors;
import io.vertx.core.VertxException;
import io.vertx.core.http.ConnectionPoolTooBusyException;
import io.vertx.core.impl.NoStackTraceThrowable;
import io.vertx.mysqlclient.MySQLException;
import io.vertx.redis.client.impl.types.ErrorType;
import io.vertx.sqlclient.ClosedConnectionException;
import org.eclipse.microprofile.faulttolerance.exceptions.CircuitBreakerOpenException;

import java.net.ConnectException;
import java.net.SocketException;
import java.nio.channels.ClosedChannelException;
import java.util.Set;
import java.util.concurrent.TimeoutException;

/**
 * Tells a store that failed for now (unreachable, timed out, lost the connection, deadlocked) from a
 * request that failed for good. The first kind is answered 503 with Retry-After and may be retried
 * with the same command and key; it was never the client's fault. Only the database's and Redis's
 * own failures count ({@link SqlErrors}, {@link RedisErrors}) and the clients' connection failures:
 * any other exception is a bug, and a bug must not be retried and answered "try later" forever.
 */
public final class DependencyFailure {

    /**
     * How the Vert.x Redis and SQL clients fail a command on a connection that has closed, a pool
     * connection that closed while it was set up, a wait for a pooled connection that ran out, and a
     * statement asked of a pool that has closed (an instance stopping under it; another one answers):
     * message-only throwables, so their messages are all there is to tell them by.
     */
    private static final Set<String> CLOSED_OR_TIMED_OUT = Set.of("Connection is closed", "Connection was closed", "Timeout", "Pool closed");
    private static final String NOT_ACTIVE = "Connection is not active now";

    private DependencyFailure() {
    }

    public static boolean isTransient(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (isTransientItself(t)) {
                return true;
            }
        }
        return false;
    }

    /**
     * Transient, and worth running the same transaction again at once. A statement cut off by the
     * session's time bound is answered 503 but not retried: it would only run as long again. No
     * auto-increment value (1467, SqlErrors) is retried without being transient.
     */
    public static boolean isWorthRetrying(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (SqlErrors.isStatementTimeout(t)) {
                return false;
            }
            if (SqlErrors.isNoAutoIncrementValue(t)) {
                return true;
            }
        }
        return isTransient(failure);
    }

    private static boolean isTransientItself(Throwable t) {
        if (t instanceof MySQLException) {
            return SqlErrors.isTransient(t);
        }
        if (t instanceof ErrorType) {
            return RedisErrors.isTransient(t);
        }
        if (t instanceof NoStackTraceThrowable || t.getClass() == VertxException.class) {
            String message = t.getMessage() == null ? "" : t.getMessage();
            return CLOSED_OR_TIMED_OUT.contains(message) || message.startsWith(NOT_ACTIVE);
        }
        return isConnectionFailure(t) || isTimeout(t);
    }

    private static boolean isConnectionFailure(Throwable t) {
        return t instanceof ConnectException
                || t instanceof SocketException
                || t instanceof ClosedChannelException
                || t instanceof ClosedConnectionException
                || t instanceof ConnectionPoolTooBusyException;
    }

    /** A store too slow for a client-side timeout, a pool without a free connection in time, or an open breaker. */
    private static boolean isTimeout(Throwable t) {
        return t instanceof TimeoutException
                || t instanceof io.smallrye.mutiny.TimeoutException
                || t instanceof org.eclipse.microprofile.faulttolerance.exceptions.TimeoutException
                || t instanceof CircuitBreakerOpenException;
    }
}
