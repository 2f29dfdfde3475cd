package io.payonce.payment.refund;

import io.payonce.idempotency.IdempotencyKey;
import io.payonce.order.Order;
import io.payonce.payment.operation.OperationStore;
import io.payonce.payment.operation.ProcessorIdTaken;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.mysqlclient.MySQLClient;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.RowSet;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * SQL for refunds to the card. Every phase change is a compare-and-set on the phases it may leave, so
 * that the request, a retry of it and the recovery job on any instance can race and only one moves
 * it. {@code busy_until} is a lease: while it lies ahead one worker owns the refund's next call to the
 * processor; once it has passed, anyone may take it. {@code leased_until} is the same lease alone,
 * without the recovery job's backoff that {@code busy_until} also holds: what an operator's
 * settlement waits for ({@link OperatorRefundSettlementRepository}). {@code attempts} fences the workers, as a card
 * payment's charge attempts do: taking the lease and marking a send each count one, by
 * compare-and-set on the count the worker holds ({@link CardRefund#attempts}), so a worker that
 * stalled past its lease finds the count moved on and neither sends nor clears the first send's time.
 *
 * <p>{@code first_sent_at} starts the resend window, and is NULL only while no send can have reached
 * the processor: every send records its time first (a resend too, if the window never started), and
 * only the worker whose own send could not connect, having found no send recorded when it took the
 * refund, clears it, fenced by its attempts.
 */
@ApplicationScoped
class CardRefundRepository implements OperationStore<CardRefund> {

    static final String COLUMNS = "r.id, r.order_id, r.user_id, r.refund_no, r.amount, o.currency, r.phase, r.idem_scope, r.idem_key, "
            + "r.processor_key, r.processor_charge_id, r.attempts, TIMESTAMPDIFF(MICROSECOND, r.first_sent_at, NOW(6)) AS sent_micros_ago, "
            + "r.processor_refund_id";

    /** A refund is in the order's currency, as its payment was. */
    static final String FROM = " FROM refund_record r JOIN orders o ON o.id = r.order_id ";

    private static final String UNSETTLED = "('STARTED', 'SENT', 'UNKNOWN')";

    /** UNIQUE(order_id, refund_no) and UNIQUE(processor_key): a refund number refunds once, at the processor too. */
    private static final String INSERT_STARTED = """
            INSERT INTO refund_record (order_id, refund_no, user_id, amount, method, phase, idem_scope, idem_key, processor_key,
                processor_charge_id, busy_until, leased_until)
            VALUES (?, ?, ?, ?, 'CARD', 'STARTED', ?, ?, ?, ?, NOW(6) + INTERVAL ? MICROSECOND, NOW(6) + INTERVAL ? MICROSECOND)""";

    /** Renews the lease too: the worker that sends owns the refund for a whole call from now. */
    private static final String MARK_SENT = """
            UPDATE refund_record SET phase = 'SENT', attempts = attempts + 1, first_sent_at = NOW(6),
                busy_until = NOW(6) + INTERVAL ? MICROSECOND, leased_until = NOW(6) + INTERVAL ? MICROSECOND
            WHERE id = ? AND phase = 'STARTED' AND attempts = ?""";

    /** By compare-and-set on the attempts as read, so that what was read of the refund is what the lease holds. */
    private static final String TAKE_LEASE = "UPDATE refund_record SET busy_until = NOW(6) + INTERVAL ? MICROSECOND, "
            + "leased_until = NOW(6) + INTERVAL ? MICROSECOND, attempts = attempts + 1 WHERE id = ? AND phase IN " + UNSETTLED
            + " AND busy_until < NOW(6) AND attempts = ?";

    /**
     * A send after the first, by the worker that holds the lease and only within the resend window as
     * the database sees it now, not as the worker read it, maybe minutes before: its time starts the
     * window if no send did (the ones before could not connect), since this one may reach the processor.
     */
    private static final String MARK_RESENT = "UPDATE refund_record SET attempts = attempts + 1, "
            + "first_sent_at = COALESCE(first_sent_at, NOW(6)) WHERE id = ? AND phase IN ('SENT', 'UNKNOWN') AND attempts = ? "
            + "AND (first_sent_at IS NULL OR first_sent_at > NOW(6) - INTERVAL ? MICROSECOND)";

    private static final String SUCCEED = "UPDATE refund_record SET phase = 'SUCCEEDED', processor_refund_id = ?, busy_until = NULL, "
            + "leased_until = NULL WHERE id = ? AND phase IN " + UNSETTLED;

    private static final String FAIL = "UPDATE refund_record SET phase = 'FAILED', processor_refund_id = ?, failure_code = ?, "
            + "busy_until = NULL, leased_until = NULL WHERE id = ? AND phase IN " + UNSETTLED;

    /**
     * Hands the refund to the recovery job after a backoff that the attempts so far stretch; never
     * sooner than a lease another worker may hold. The resend window is closed again only by the
     * worker whose send certainly never reached the processor, and only while no one has counted an
     * attempt since: a stale worker's late word cannot reopen the window after another's send. The
     * worker's own lease ends here, and only its own: the attempt it took the lease with fences it.
     */
    private static final String MARK_UNKNOWN = "UPDATE refund_record SET phase = 'UNKNOWN', busy_until = GREATEST(busy_until, "
            + "NOW(6) + INTERVAL LEAST(? * POW(2, LEAST(attempts, 20)), ?) MICROSECOND), "
            + "first_sent_at = IF(? AND attempts = ?, NULL, first_sent_at), leased_until = IF(attempts = ?, NULL, leased_until) "
            + "WHERE id = ? AND phase IN " + UNSETTLED;

    private static final String SELECT_BY_ORDER_AND_NO = "SELECT " + COLUMNS + FROM
            + "WHERE r.order_id = ? AND r.refund_no = ? AND r.method = 'CARD'";

    /** Through the index (phase, busy_until): the refunds whose lease has run out. */
    private static final String SELECT_UNATTENDED = "SELECT " + COLUMNS + FROM
            + "WHERE r.phase IN " + UNSETTLED + " AND r.busy_until < NOW(6) ORDER BY r.busy_until LIMIT ?";

    /** Through UNIQUE(processor_key): the refund a processor's event names by the key it was made under. */
    private static final String SELECT_BY_PROCESSOR_KEY = "SELECT " + COLUMNS + FROM + "WHERE r.processor_key = ? AND r.method = 'CARD'";

    private static final String COUNT_UNSETTLED_OF_ORDER = "SELECT COUNT(*) AS unsettled FROM refund_record "
            + "WHERE order_id = ? AND phase IN " + UNSETTLED;

    private static final String INSERT_PHASE = "INSERT INTO refund_phase (refund_id, phase, detail, event_id) VALUES (?, ?, ?, ?)";

    private static final String COUNT_OVERDUE = "SELECT COUNT(*) AS overdue FROM refund_record WHERE phase IN " + UNSETTLED
            + " AND created_at < NOW(6) - INTERVAL ? MICROSECOND";

    Uni<CardRefund> insertStarted(SqlClient tx, Order order, String refundNo, long amount, String scope, IdempotencyKey key,
                                  String processorKey, String chargeId, Duration lease) {
        return tx.preparedQuery(INSERT_STARTED)
                .execute(Tuple.of(order.id(), refundNo, order.userId(), amount, scope, key.value()).addString(processorKey)
                        .addString(chargeId).addLong(micros(lease)).addLong(micros(lease)))
                .map(rows -> new CardRefund(rows.property(MySQLClient.LAST_INSERTED_ID), order.id(), order.userId(), refundNo, amount,
                        order.currency(), RefundPhase.STARTED, scope, key, processorKey, chargeId, 0, null, null));
    }

    /** SENT, with its history line: the first send is the worker's that holds {@code refund} (its attempts as it holds them). */
    @Override
    public Uni<Boolean> markSent(SqlConnection tx, CardRefund refund, Duration lease) {
        return moved(tx.preparedQuery(MARK_SENT).execute(Tuple.of(micros(lease), micros(lease), refund.id(), refund.attempts())))
                .call(sent -> sent ? recordPhase(tx, refund.id(), RefundPhase.SENT, null) : Uni.createFrom().voidItem());
    }

    @Override
    public Uni<Boolean> takeLease(SqlClient client, CardRefund refund, Duration lease) {
        return moved(client.preparedQuery(TAKE_LEASE).execute(Tuple.of(micros(lease), micros(lease), refund.id(), refund.attempts())));
    }

    @Override
    public Uni<Boolean> markResent(SqlClient client, CardRefund refund, Duration window) {
        return moved(client.preparedQuery(MARK_RESENT).execute(Tuple.of(refund.id(), refund.attempts(), micros(window))));
    }

    /**
     * True when this moved the refund to SUCCEEDED, false when it was settled already.
     *
     * @throws ProcessorIdTaken when another refund holds {@code processorRefundId}
     */
    Uni<Boolean> succeed(SqlClient tx, long id, String processorRefundId) {
        return moved(ProcessorIdTaken.recordedOnce(tx.preparedQuery(SUCCEED).execute(Tuple.of(processorRefundId, id)), processorRefundId));
    }

    /** As {@link #succeed}, to FAILED; a refusal that names no processor refund ({@code processorRefundId} null) is never taken. */
    Uni<Boolean> fail(SqlClient tx, long id, String processorRefundId, String failureCode) {
        return moved(ProcessorIdTaken.recordedOnce(tx.preparedQuery(FAIL).execute(Tuple.of(processorRefundId, failureCode, id)), processorRefundId));
    }

    /**
     * {@code neverSent}: no send of the refund has reached the processor so far, the one of the worker
     * that counted {@code attempts} included, so the resend window has not started yet.
     */
    Uni<Boolean> markUnknown(SqlClient tx, CardRefund refund, Duration firstBackoff, Duration maxBackoff, boolean neverSent) {
        return moved(tx.preparedQuery(MARK_UNKNOWN).execute(Tuple.of(micros(firstBackoff), micros(maxBackoff), neverSent,
                refund.attempts(), refund.attempts(), refund.id())));
    }

    Uni<CardRefund> findByOrderAndNo(SqlClient client, long orderId, String refundNo) {
        return client.preparedQuery(SELECT_BY_ORDER_AND_NO).execute(Tuple.of(orderId, refundNo)).map(CardRefundRepository::single);
    }

    Uni<CardRefund> findByProcessorKey(SqlClient client, String processorKey) {
        return client.preparedQuery(SELECT_BY_PROCESSOR_KEY).execute(Tuple.of(processorKey)).map(CardRefundRepository::single);
    }

    /**
     * The same refund, read as it stands now and locked for the rest of the transaction, its order's
     * row too: take the order's row lock first ({@code OrderRepository.lockById}), as every definite
     * outcome of a refund does, so that two of them never wait on each other's locks.
     */
    Uni<CardRefund> lockByProcessorKey(SqlClient tx, String processorKey) {
        return tx.preparedQuery(SELECT_BY_PROCESSOR_KEY + " FOR UPDATE").execute(Tuple.of(processorKey)).map(CardRefundRepository::single);
    }

    @Override
    public Uni<List<CardRefund>> findUnattended(SqlClient client, int limit) {
        return client.preparedQuery(SELECT_UNATTENDED).execute(Tuple.of(limit)).map(rows -> {
            List<CardRefund> refunds = new ArrayList<>();
            rows.forEach(row -> refunds.add(from(row)));
            return refunds;
        });
    }

    /** The order's refunds still waiting for the processor; read under the order's row lock, which every change of them takes first. */
    Uni<Long> countUnsettled(SqlClient tx, long orderId) {
        return tx.preparedQuery(COUNT_UNSETTLED_OF_ORDER).execute(Tuple.of(orderId)).map(rows -> rows.iterator().next().getLong("unsettled"));
    }

    @Override
    public Uni<Long> countOverdue(SqlClient client, Duration age) {
        return client.preparedQuery(COUNT_OVERDUE).execute(Tuple.of(micros(age))).map(rows -> rows.iterator().next().getLong("overdue"));
    }

    /** One line of the refund's history; {@code detail} is plain words for ops, never a token. */
    Uni<Void> recordPhase(SqlClient tx, long refundId, RefundPhase phase, String detail) {
        return recordPhase(tx, refundId, phase, detail, null);
    }

    /** {@code eventId}: the processor's webhook event whose delivery moved the refund into {@code phase}, or null. */
    Uni<Void> recordPhase(SqlClient tx, long refundId, RefundPhase phase, String detail, String eventId) {
        return tx.preparedQuery(INSERT_PHASE).execute(Tuple.of(refundId, phase.name(), detail, eventId)).replaceWithVoid();
    }

    static Uni<Boolean> moved(Uni<RowSet<Row>> update) {
        return update.map(rows -> rows.rowCount() == 1);
    }

    static long micros(Duration duration) {
        return duration.toNanos() / 1000;
    }

    private static CardRefund single(RowSet<Row> rows) {
        var iterator = rows.iterator();
        return iterator.hasNext() ? from(iterator.next()) : null;
    }

    static CardRefund from(Row row) {
        Long sentMicrosAgo = row.getLong("sent_micros_ago");
        return new CardRefund(row.getLong("id"), row.getLong("order_id"), row.getString("user_id"), row.getString("refund_no"),
                row.getLong("amount"), row.getString("currency"), RefundPhase.valueOf(row.getString("phase")), row.getString("idem_scope"),
                new IdempotencyKey(row.getString("idem_key")), row.getString("processor_key"), row.getString("processor_charge_id"),
                row.getInteger("attempts"), sentMicrosAgo == null ? null : Duration.ofNanos(sentMicrosAgo * 1000),
                row.getString("processor_refund_id"));
    }
}
