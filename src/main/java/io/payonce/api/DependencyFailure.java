package io.payonce.api;

import io.vertx.mysqlclient.MySQLException;
import io.vertx.sqlclient.ClosedConnectionException;
import org.eclipse.microprofile.faulttolerance.exceptions.CircuitBreakerOpenException;

import java.io.IOException;
import java.net.ConnectException;
import java.util.Set;
import java.util.concurrent.TimeoutException;

/**
 * Tells a store that failed for now (unreachable, timed out, lost the connection, deadlocked) from a
 * request that failed for good. The first kind is answered 503 with Retry-After and may be retried
 * with the same command and key; it was never the client's fault.
 */
public final class DependencyFailure {

    /** Deadlock, lock-wait timeout, too many connections, server gone, connection lost, read-only failover. */
    private static final Set<Integer> TRANSIENT_MYSQL_ERRORS = Set.of(1213, 1205, 1040, 2006, 2013, 1290, 1927);

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

    private static boolean isTransientItself(Throwable t) {
        if (t instanceof MySQLException mysql) {
            return TRANSIENT_MYSQL_ERRORS.contains(mysql.getErrorCode());
        }
        return t instanceof ConnectException
                || t instanceof ClosedConnectionException
                || t instanceof IOException
                || t instanceof TimeoutException
                || t instanceof io.smallrye.mutiny.TimeoutException
                || t instanceof CircuitBreakerOpenException;
    }
}
