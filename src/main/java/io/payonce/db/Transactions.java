package io.payonce.db;

import io.payonce.config.PayonceConfig;
import io.smallrye.faulttolerance.api.RetryWhen;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.faulttolerance.Retry;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The one way payonce runs a transaction that moves money. A deadlock, a lock-wait timeout or a lost
 * connection ({@link SqlErrors}) re-runs the whole transaction, with the same command and therefore
 * the same Idempotency-Key: if the lost attempt had in fact committed, the retry's claim finds its
 * answer and replays it instead of moving money again. Retries are bounded and jittered; when they
 * run out the failure becomes 503 with Retry-After.
 *
 * <p>Each attempt is also bounded on the client: an attempt with no answer after a statement's and an
 * idle transaction's bounds together is given up as a lost connection. The server ends such a
 * transaction by then, but a connection it reset while this instance was paused can leave a command
 * that never completes here; the retry then finds the key's fate through its claim.
 */
@ApplicationScoped
public class Transactions {

    private static final Logger LOG = Logger.getLogger(Transactions.class);

    private final Pool pool;
    private final Duration attemptBound;

    public Transactions(Pool pool, PayonceConfig config) {
        this.pool = pool;
        this.attemptBound = Duration.ofSeconds(
                config.database().statementTimeoutSeconds() + config.database().idleTransactionTimeoutSeconds());
    }

    @Retry(maxRetries = 3, delay = 30, jitter = 20)
    @RetryWhen(exception = Transient.class)
    public <T> Uni<T> inTransaction(Function<SqlConnection, Uni<T>> work) {
        return pool.withTransaction(work)
                .ifNoItem().after(attemptBound).fail()
                .onFailure(DependencyFailure::isTransient)
                .invoke(e -> LOG.infof("Transaction failed transiently, retrying with the same command: %s", e.toString()));
    }

    /** Which failures are worth a retry; anything else is an answer. */
    public static final class Transient implements Predicate<Throwable> {
        @Override
        public boolean test(Throwable failure) {
            return DependencyFailure.isWorthRetrying(failure);
        }
    }
}
