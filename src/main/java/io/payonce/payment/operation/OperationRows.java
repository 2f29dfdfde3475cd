package io.payonce.payment.operation;

import io.payonce.db.Rows;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;

import java.time.Duration;
import java.util.List;
import java.util.function.Function;

/**
 * The lifecycle's statements, written once for every kind's table ({@link Table}): each phase change
 * is a compare-and-set on the phases it may leave, so that the request, a retry of it and the
 * recovery job on any instance can race and only one moves the operation. {@code busy_until} is a
 * lease: while it lies ahead one worker owns the operation's next call to the processor; once it has
 * passed, anyone may take it. {@code leased_until} is the same lease alone, without the recovery
 * job's backoff that {@code busy_until} also holds: what an operator's settlement waits for. The
 * attempts column fences the workers: taking the lease and marking a send each count one, by
 * compare-and-set on the count the worker holds ({@link Operation#attempts}), so a worker that stalled
 * past its lease finds the count moved on and neither sends nor clears the first send's time.
 *
 * <p>{@code first_sent_at} starts the resend window, and is NULL only while no send can have reached
 * the processor: every send records its time first (a resend too, if the window never started), and
 * only the worker whose own send could not connect, having found no send recorded when it took its
 * lease, clears it, fenced by its attempts. A kind adds its own statements (its first insert, its
 * reads) beside these. Every statement here is public: a kind's repository is an application-scoped
 * bean, reached through a client proxy in the kind's package, which forwards no package-private call.
 */
public abstract class OperationRows<O extends Operation<O>> {

    /**
     * A kind's table in the lifecycle's terms: its name and alias, what a read of one operation selects
     * and joins ({@code select}, ending before WHERE), its attempts column, its stored words for SENT
     * and FAILED, the columns of the processor's id and of a failure's code, and its history table with
     * the column naming the operation there.
     */
    public record Table(String name, String alias, String select, String attempts, String sent, String failed, String processorId,
                        String failureCode, String history, String historyOf) {

        /** The phases an operation waits for the processor in, as an SQL list. */
        public String unsettled() {
            return "('STARTED', '" + sent + "', 'UNKNOWN')";
        }
    }

    private final Function<Row, O> reader;
    private final String markSent;
    private final String markResent;
    private final String takeLease;
    private final String succeed;
    private final String fail;
    private final String markUnknown;
    private final String selectUnattended;
    private final String selectByProcessorKey;
    private final String insertPhase;
    private final String countOverdue;
    private final String settleSucceeded;
    private final String settleFailed;

    protected OperationRows(Table table, Function<Row, O> reader) {
        this.reader = reader;
        String name = table.name();
        String attempts = table.attempts();
        String unsettled = table.unsettled();
        // Renews the lease too: the worker that sends owns the operation for a whole call from now.
        this.markSent = "UPDATE " + name + " SET phase = '" + table.sent() + "', " + attempts + " = " + attempts + " + 1, first_sent_at = NOW(6), "
                + "busy_until = NOW(6) + INTERVAL ? MICROSECOND, leased_until = NOW(6) + INTERVAL ? MICROSECOND "
                + "WHERE id = ? AND phase = 'STARTED' AND " + attempts + " = ?";
        // The window is judged here, by the database's clock at the moment of the resend, not by the age the worker
        // read: a recovery batch read minutes ago must not resend past it.
        this.markResent = "UPDATE " + name + " SET " + attempts + " = " + attempts + " + 1, first_sent_at = COALESCE(first_sent_at, NOW(6)) "
                + "WHERE id = ? AND phase IN ('" + table.sent() + "', 'UNKNOWN') AND " + attempts + " = ? "
                + "AND (first_sent_at IS NULL OR first_sent_at > NOW(6) - INTERVAL ? MICROSECOND)";
        // By compare-and-set on the attempts as read, so that what was read of the operation is what the lease holds.
        this.takeLease = "UPDATE " + name + " SET busy_until = NOW(6) + INTERVAL ? MICROSECOND, leased_until = NOW(6) + INTERVAL ? MICROSECOND, "
                + attempts + " = " + attempts + " + 1 WHERE id = ? AND phase IN " + unsettled + " AND busy_until < NOW(6) AND " + attempts + " = ?";
        this.succeed = "UPDATE " + name + " SET phase = 'SUCCEEDED', " + table.processorId() + " = ?, busy_until = NULL, leased_until = NULL "
                + "WHERE id = ? AND phase IN " + unsettled;
        this.fail = "UPDATE " + name + " SET phase = '" + table.failed() + "', " + table.processorId() + " = ?, " + table.failureCode() + " = ?, "
                + "busy_until = NULL, leased_until = NULL WHERE id = ? AND phase IN " + unsettled;
        // Hands the operation to the recovery job after a backoff that the attempts so far stretch; never sooner than a
        // lease another worker may hold. The resend window is closed again only by the worker whose send certainly never
        // reached the processor, and only while no one has counted an attempt since. The worker's own lease ends here,
        // and only its own: the attempt it took the lease with fences it.
        this.markUnknown = "UPDATE " + name + " SET phase = 'UNKNOWN', busy_until = GREATEST(busy_until, "
                + "NOW(6) + INTERVAL LEAST(? * POW(2, LEAST(" + attempts + ", 20)), ?) MICROSECOND), "
                + "first_sent_at = IF(? AND " + attempts + " = ?, NULL, first_sent_at), leased_until = IF(" + attempts + " = ?, NULL, leased_until) "
                + "WHERE id = ? AND phase IN " + unsettled;
        // Through the index (phase, busy_until): the operations whose lease has run out.
        this.selectUnattended = table.select() + " WHERE " + table.alias() + ".phase IN " + unsettled + " AND " + table.alias()
                + ".busy_until < NOW(6) ORDER BY " + table.alias() + ".busy_until LIMIT ?";
        // Through UNIQUE(processor_key): the operation a processor's event names by the key it was made under.
        this.selectByProcessorKey = table.select() + " WHERE " + table.alias() + ".processor_key = ? AND " + table.alias() + ".method = 'CARD'";
        this.insertPhase = "INSERT INTO " + table.history() + " (" + table.historyOf() + ", phase, detail, event_id) VALUES (?, ?, ?, ?)";
        this.countOverdue = "SELECT COUNT(*) AS overdue FROM " + name + " WHERE phase IN " + unsettled
                + " AND created_at < NOW(6) - INTERVAL ? MICROSECOND";
        // An operator's settlement, on all the operator checked: UNKNOWN, overdue, no lease, and no worker that took the
        // operation since it was read (the attempts count every lease taken).
        String settleable = " WHERE id = ? AND phase = 'UNKNOWN' AND " + attempts + " = ? "
                + "AND (leased_until IS NULL OR leased_until <= NOW(6)) AND first_sent_at < NOW(6) - INTERVAL ? MICROSECOND";
        this.settleSucceeded = "UPDATE " + name + " SET phase = 'SUCCEEDED', " + table.processorId() + " = ?, busy_until = NULL, "
                + "leased_until = NULL" + settleable;
        this.settleFailed = "UPDATE " + name + " SET phase = '" + table.failed() + "', " + table.failureCode() + " = ?, busy_until = NULL, "
                + "leased_until = NULL" + settleable;
    }

    /** STARTED to SENT in {@code tx}, with its history line and a lease of {@code lease}; true when this worker's first send is to be made. */
    public Uni<Boolean> markSent(SqlConnection tx, O operation, Duration lease) {
        return moved(tx.preparedQuery(markSent).execute(Tuple.of(micros(lease), micros(lease), operation.id(), operation.attempts())))
                .call(sent -> sent ? recordPhase(tx, operation.id(), operation.phaseNamed(Phase.SENT), null, null) : Uni.createFrom().voidItem());
    }

    /**
     * Counts a resend by the worker holding the operation, its time starting the window if no send did;
     * true only while that worker still holds it and the first send lies within {@code window}.
     */
    public Uni<Boolean> markResent(SqlClient client, O operation, Duration window) {
        return moved(client.preparedQuery(markResent).execute(Tuple.of(operation.id(), operation.attempts(), micros(window))));
    }

    /** True when this caller now owns the operation's next call for {@code lease}, as it read it (one more attempt). */
    public Uni<Boolean> takeLease(SqlClient client, O operation, Duration lease) {
        return moved(client.preparedQuery(takeLease).execute(Tuple.of(micros(lease), micros(lease), operation.id(), operation.attempts())));
    }

    /**
     * True when this moved the operation to SUCCEEDED, recording {@code processorId} as its own; false
     * when it was settled already.
     *
     * @throws ProcessorIdTaken when another operation of the kind holds {@code processorId}
     */
    public Uni<Boolean> succeed(SqlClient tx, long id, String processorId) {
        return moved(ProcessorIdTaken.recordedOnce(tx.preparedQuery(succeed).execute(Tuple.of(processorId, id)), processorId));
    }

    /** As {@link #succeed}, to FAILED with {@code failureCode}; a refusal that names no processor object ({@code processorId} null) is never taken. */
    public Uni<Boolean> fail(SqlClient tx, long id, String processorId, String failureCode) {
        return moved(ProcessorIdTaken.recordedOnce(tx.preparedQuery(fail).execute(Tuple.of(processorId, failureCode, id)), processorId));
    }

    /** UNKNOWN, for the recovery job after a backoff; {@code neverSent} clears the window's start, fenced by the attempts. */
    public Uni<Boolean> markUnknown(SqlClient tx, O operation, Duration firstBackoff, Duration maxBackoff, boolean neverSent) {
        return moved(tx.preparedQuery(markUnknown).execute(Tuple.of(micros(firstBackoff), micros(maxBackoff), neverSent,
                operation.attempts(), operation.attempts(), operation.id())));
    }

    /**
     * An operator's settlement as {@code claim} says (a failure with {@code failureCode}), if the
     * operation is still as the operator found it and overdue past {@code window}; true when this moved it.
     *
     * @throws ProcessorIdTaken when another operation of the kind holds the processor's id the claim names
     */
    public Uni<Boolean> settleByOperator(SqlClient tx, O operation, OperatorClaim claim, String failureCode, Duration window) {
        Tuple settled = (claim.succeeded() ? Tuple.of(claim.processorId()) : Tuple.of(failureCode))
                .addLong(operation.id()).addInteger(operation.attempts()).addLong(micros(window));
        return moved(claim.succeeded()
                ? ProcessorIdTaken.recordedOnce(tx.preparedQuery(settleSucceeded).execute(settled), claim.processorId())
                : tx.preparedQuery(settleFailed).execute(settled));
    }

    /** The operation made under {@code processorKey}, or null; {@code locked} only after the kind's own lock ({@link OperationKind#notice}). */
    public Uni<O> findByProcessorKey(SqlClient client, String processorKey, boolean locked) {
        return client.preparedQuery(locked ? selectByProcessorKey + " FOR UPDATE" : selectByProcessorKey).execute(Tuple.of(processorKey))
                .map(this::single);
    }

    /** Unsettled operations whose lease has run out, the longest waiting first; at most {@code limit}. */
    public Uni<List<O>> findUnattended(SqlClient client, int limit) {
        return client.preparedQuery(selectUnattended).execute(Tuple.of(limit)).map(rows -> rows.stream().map(reader).toList());
    }

    /** Unsettled operations that began more than {@code age} ago. */
    public Uni<Long> countOverdue(SqlClient client, Duration age) {
        return client.preparedQuery(countOverdue).execute(Tuple.of(micros(age))).map(rows -> rows.iterator().next().getLong("overdue"));
    }

    /**
     * One line of the operation's history, {@code phase} in the kind's stored words; {@code detail} is
     * plain words for its owner, never a token; {@code eventId} the processor's webhook event whose
     * delivery moved it into {@code phase}, or null.
     */
    public Uni<Void> recordPhase(SqlClient tx, long id, String phase, String detail, String eventId) {
        return tx.preparedQuery(insertPhase).execute(Tuple.of(id, phase, detail, eventId)).replaceWithVoid();
    }

    /** The one operation {@code rows} hold, or null. */
    protected O single(RowSet<Row> rows) {
        return Rows.first(rows, reader);
    }

    public static Uni<Boolean> moved(Uni<RowSet<Row>> update) {
        return update.map(rows -> rows.rowCount() == 1);
    }

    public static long micros(Duration duration) {
        return duration.toNanos() / 1000;
    }
}
