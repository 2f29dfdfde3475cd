package io.payonce.db;

import io.payonce.errors.ApiException;
import io.payonce.config.PayonceConfig;
import io.payonce.db.PipelinedMeter.Outcome;
import io.smallrye.mutiny.CompositeException;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.sqlclient.ClosedConnectionException;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * A transaction whose statements are sent in flights, each flight's statements back to back without
 * waiting for the replies of the ones before, and committed only when every reply was as expected.
 * Its connections come from their own pool ({@link SessionSettingsPoolCreator}), where pipelining is
 * on, {@code autocommit} off and the lock wait 0 ({@link SessionSettings#forPipelining}): there is no
 * BEGIN, so a statement sent behind one the server aborted (a deadlock's victim, a Galera
 * brute-force abort) opens a new implicit transaction, which the ROLLBACK here ends, instead of
 * committing alone. A statement-only error (1062, 1205, 1969) leaves the transaction open with the
 * earlier rows in it, so COMMIT is sent only after a body has read every reply and found each as
 * expected; a body that found anything else is rolled back. model/statements.pml checks this with
 * {@code -DPIPELINED}, and its broken variants (BEGIN, and COMMIT sent unread) show what either
 * mistake costs. Outcomes are counted by {@link PipelinedMeter}.
 */
@ApplicationScoped
public class PipelinedTransactions {

    private static final Logger LOG = Logger.getLogger(PipelinedTransactions.class);

    private static final String COMMIT = "COMMIT";
    private static final String ROLLBACK = "ROLLBACK";
    private static final String KILL = "KILL CONNECTION_ID()";

    private final Optional<Pool> pool;
    private final PipelinedMeter meter;
    private final Duration unansweredAfter;

    PipelinedTransactions(SessionSettingsPoolCreator pools, Pool shared, PipelinedMeter meter, PayonceConfig config) {
        this.pool = pools.pipelinedBeside(shared);
        this.meter = meter;
        this.unansweredAfter = Duration.ofSeconds(config.database().statementTimeoutSeconds() + config.database().idleTransactionTimeoutSeconds());
    }

    /**
     * Runs {@code body} on a pipelined connection and commits it when it ends with an item. The body
     * sends its flights and returns null when a reply was not what the first, plain run expects; a
     * failed statement fails it. Either way the transaction is rolled back and this returns null:
     * nothing of the body is committed, and the caller decides the request as it would without
     * pipelining. So it does when no pipelined connection can be had, when pipelining is off
     * ({@code payonce.database.pipelined-pay}), and when COMMIT itself fails (a Galera certification
     * failure is a 1213 on COMMIT) or its reply is lost: the caller's own transaction then meets
     * whatever did commit, as a retry after a lost connection does.
     *
     * <p>The body, COMMIT, ROLLBACK and KILL are each bounded ({@link #answered}) by the time the server
     * lets a statement run and a transaction idle: a body given up is rolled back like any other, and
     * never committed. So an attempt always ends, before the caller goes on to its own transaction.
     *
     * <p>A ROLLBACK goes first, in the first flight, so that a transaction an earlier attempt could
     * have left open on the connection is never committed by this one. A connection whose ROLLBACK
     * fails is killed.
     */
    public <T> Uni<T> commitIfExpected(Function<SqlConnection, Uni<T>> body) {
        if (pool.isEmpty()) {
            return Uni.createFrom().nullItem();
        }
        return Uni.createFrom().deferred(() -> pool.get().withConnection(connection -> answered(Uni.combine().all()
                        .unis(connection.query(ROLLBACK).execute(), Uni.createFrom().deferred(() -> body.apply(connection)))
                        .collectFailures()
                        .with((cleared, result) -> result))
                        .onItemOrFailure().transformToUni((result, failure) -> result != null && failure == null
                                ? commit(connection, result)
                                : rolledBack(connection, endedWithout(failure), failure))))
                .onFailure().recoverWithItem(noConnection -> {
                    LOG.debugf("No pipelined connection: %s", noConnection);
                    meter.ended(Outcome.NO_CONNECTION);
                    return null;
                });
    }

    private <T> Uni<T> commit(SqlConnection connection, T result) {
        return answered(connection.query(COMMIT).execute())
                .map(committed -> {
                    meter.ended(Outcome.COMMITTED);
                    return result;
                })
                .onFailure().recoverWithUni(failure -> rolledBack(connection, Outcome.COMMIT_FAILED, failure));
    }

    /**
     * The body's replies are all read by now, or it was given up, so the ROLLBACK runs after the last
     * of its statements. A connection found lost is not sent one: the server rolls back the
     * transaction of a connection it lost (or, if it has not seen the loss, once the transaction has
     * been idle for its bound), and a command sent on it in the very moment it closes is never answered.
     */
    private <T> Uni<T> rolledBack(SqlConnection connection, Outcome outcome, Throwable failure) {
        meter.ended(outcome);
        if (failure != null) {
            LOG.debugf("A pipelined transaction ended %s and is rolled back: %s", outcome.tag(), failure);
        }
        if (lost(failure)) {
            return Uni.createFrom().nullItem();
        }
        return answered(connection.query(ROLLBACK).execute()).replaceWith((T) null)
                .onFailure().recoverWithUni(unended -> killed(connection, unended));
    }

    /**
     * A connection whose ROLLBACK failed is killed, and kept until the pool has seen it close, so that
     * no other attempt is handed it in between. If it outlives KILL (or closed before), the bound ends
     * the wait, and the next body's leading ROLLBACK ends whatever it still holds.
     */
    private <T> Uni<T> killed(SqlConnection connection, Throwable unended) {
        LOG.warnf("ROLLBACK failed on a pipelined connection, which is killed: %s", unended.toString());
        Uni<Void> closed = Uni.createFrom().emitter(emitter -> connection.closeHandler(() -> emitter.complete(null)));
        return connection.query(KILL).execute().onItemOrFailure().transformToUni((killed, failure) -> closed)
                .ifNoItem().after(unansweredAfter).recoverWithItem((Void) null)
                .replaceWith((T) null);
    }

    /**
     * The MySQL client answers only the first command in flight on a connection that closes, and never
     * the ones pipelined behind it (io.vertx.mysqlclient.impl.codec.MySQLCodec#channelInactive, 4.5),
     * so an attempt on a lost connection would otherwise never end. Nothing bounded here waits for a
     * lock, and the server ends a statement, or an idle transaction, within this time.
     */
    private <T> Uni<T> answered(Uni<T> command) {
        return command.ifNoItem().after(unansweredAfter).failWith(() -> new TimeoutException("no answer on a pipelined connection within " + unansweredAfter));
    }

    /**
     * How a body that did not end as a first pay ended: declined when all it met was what a first
     * pay does not (a duplicate key: a twin's claim, the order's payment, a ledger line already
     * there; a refusal of payonce's own), failed when anything else went wrong.
     */
    private static Outcome endedWithout(Throwable failure) {
        if (failure == null) {
            return Outcome.DECLINED;
        }
        return causes(failure).stream().allMatch(cause -> SqlErrors.isDuplicateKey(cause) || cause instanceof ApiException)
                ? Outcome.DECLINED
                : Outcome.FAILED;
    }

    private static boolean lost(Throwable failure) {
        return failure != null && causes(failure).stream().anyMatch(ClosedConnectionException.class::isInstance);
    }

    /** The failures of the statements sent together, which collectFailures gathers in one; or the one failure. */
    private static List<Throwable> causes(Throwable failure) {
        return failure instanceof CompositeException composite ? composite.getCauses() : List.of(failure);
    }
}
