package io.payonce.payment.card;

import io.payonce.idempotency.IdempotencyKey;
import io.payonce.order.Order;
import io.payonce.payment.PaymentPhase;
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
 * SQL for card payments. Every phase change is a compare-and-set on the phases it may leave, so that
 * the request, a retry of it and the recovery job on any instance can race and only one moves it.
 * {@code busy_until} is a lease: while it lies ahead one worker owns the payment's next call to the
 * processor; once it has passed, anyone may take it. {@code leased_until} is the same lease alone,
 * without the recovery job's backoff that {@code busy_until} also holds: what an operator's
 * settlement waits for ({@link OperatorSettlementRepository}). {@code charge_attempts} fences the workers:
 * taking the lease and marking a send each count one, by compare-and-set on the count the worker
 * holds ({@link CardPayment#attempts}), so a worker that stalled past its lease finds the count
 * moved on and neither sends nor clears the first send's time.
 *
 * <p>{@code first_sent_at} starts the resend window, and is NULL only while no send can have reached
 * the processor: every send records its time first (a resend too, if the window never started), and
 * only the worker whose own send could not connect, having found no send recorded when it took its
 * lease, clears it, fenced by its attempts.
 */
@ApplicationScoped
class CardPaymentRepository implements OperationStore<CardPayment> {

    static final String COLUMNS = "p.id, p.order_id, p.user_id, p.amount, p.currency, p.phase, p.idem_key, p.card_token, p.processor_key, "
            + "p.processor_charge_id, "
            + "p.charge_attempts, TIMESTAMPDIFF(MICROSECOND, p.first_sent_at, NOW(6)) AS sent_micros_ago";

    private static final String UNSETTLED = "('STARTED', 'CHARGE_SENT', 'UNKNOWN')";

    /**
     * UNIQUE(live_order_id): an order has at most one payment that is not declined.
     * UNIQUE(processor_key): one payment row per key at the processor. The key is derived from the
     * request (io.payonce.processor.ProcessorKeys); a payment begun while keys were random keeps its
     * random "payonce-" key on its row, and every later call under it reads it from there.
     */
    private static final String INSERT_STARTED = """
            INSERT INTO pay_record (order_id, user_id, amount, currency, method, phase, idem_key, card_token, processor_key, busy_until,
                leased_until)
            VALUES (?, ?, ?, ?, 'CARD', 'STARTED', ?, ?, ?, NOW(6) + INTERVAL ? MICROSECOND, NOW(6) + INTERVAL ? MICROSECOND)""";

    /** Renews the lease too: the worker that sends owns the payment for a whole call from now. */
    private static final String MARK_SENT = """
            UPDATE pay_record SET phase = 'CHARGE_SENT', charge_attempts = charge_attempts + 1, first_sent_at = NOW(6),
                busy_until = NOW(6) + INTERVAL ? MICROSECOND, leased_until = NOW(6) + INTERVAL ? MICROSECOND
            WHERE id = ? AND phase = 'STARTED' AND charge_attempts = ?""";

    /**
     * A send after the first, by the worker that holds the lease: its time starts the resend window
     * if no send did (the ones before could not connect), since this one may reach the processor.
     * The window is judged here, by the database's clock at the moment of the resend, not by the age
     * the worker read: a recovery batch read minutes ago must not resend past it.
     */
    private static final String MARK_RESENT = "UPDATE pay_record SET charge_attempts = charge_attempts + 1, "
            + "first_sent_at = COALESCE(first_sent_at, NOW(6)) WHERE id = ? AND phase IN ('CHARGE_SENT', 'UNKNOWN') AND charge_attempts = ? "
            + "AND (first_sent_at IS NULL OR first_sent_at > NOW(6) - INTERVAL ? MICROSECOND)";

    /** By compare-and-set on the attempts as read, so that what was read of the payment is what the lease holds. */
    private static final String TAKE_LEASE = "UPDATE pay_record SET busy_until = NOW(6) + INTERVAL ? MICROSECOND, "
            + "leased_until = NOW(6) + INTERVAL ? MICROSECOND, charge_attempts = charge_attempts + 1 WHERE id = ? AND phase IN " + UNSETTLED + " AND busy_until < NOW(6) "
            + "AND charge_attempts = ?";

    private static final String SUCCEED = "UPDATE pay_record SET phase = 'SUCCEEDED', processor_charge_id = ?, busy_until = NULL, "
            + "leased_until = NULL WHERE id = ? AND phase IN " + UNSETTLED;

    private static final String DECLINE = "UPDATE pay_record SET phase = 'DECLINED', processor_charge_id = ?, decline_code = ?, "
            + "busy_until = NULL, leased_until = NULL WHERE id = ? AND phase IN " + UNSETTLED;

    /**
     * Hands the payment to the recovery job after a backoff that the attempts so far stretch; never
     * sooner than a lease another worker may hold, so that a worker that stalled past its own lease
     * cannot cut short the lease of the one that took over. The worker's own lease ends here, and only
     * its own: the attempt it took the lease with fences it.
     */
    private static final String MARK_UNKNOWN = "UPDATE pay_record SET phase = 'UNKNOWN', busy_until = GREATEST(busy_until, "
            + "NOW(6) + INTERVAL LEAST(? * POW(2, LEAST(charge_attempts, 20)), ?) MICROSECOND), "
            + "first_sent_at = IF(? AND charge_attempts = ?, NULL, first_sent_at), leased_until = IF(charge_attempts = ?, NULL, leased_until) "
            + "WHERE id = ? AND phase IN " + UNSETTLED;

    private static final String SELECT_BY_ORDER_AND_KEY = "SELECT " + COLUMNS + " FROM pay_record p "
            + "WHERE p.order_id = ? AND p.idem_key = ? AND p.method = 'CARD' ORDER BY p.id DESC LIMIT 1";

    /** Through the index (phase, busy_until): the payments whose lease has run out. */
    private static final String SELECT_UNATTENDED = "SELECT " + COLUMNS + " FROM pay_record p "
            + "WHERE p.phase IN " + UNSETTLED + " AND p.busy_until < NOW(6) ORDER BY p.busy_until LIMIT ?";

    /** Through UNIQUE(processor_key); only a declined payment leaves its order payable, under the same key again. */
    private static final String SELECT_DECLINED_BY_PROCESSOR_KEY = "SELECT id, decline_code FROM pay_record "
            + "WHERE processor_key = ? AND phase = 'DECLINED'";


    /**
     * Locks the payment for the rest of the transaction: what is found settled or unsettled stays so
     * until it commits, so an outcome learnt from outside is judged against the phase it meets.
     */
    private static final String SELECT_BY_PROCESSOR_KEY_FOR_UPDATE = "SELECT " + COLUMNS + " FROM pay_record p "
            + "WHERE p.processor_key = ? AND p.method = 'CARD' FOR UPDATE";

    private static final String INSERT_PHASE = "INSERT INTO payment_phase (payment_id, phase, detail, event_id) VALUES (?, ?, ?, ?)";

    private static final String COUNT_OVERDUE = "SELECT COUNT(*) AS overdue FROM pay_record WHERE phase IN " + UNSETTLED
            + " AND created_at < NOW(6) - INTERVAL ? MICROSECOND";

    Uni<CardPayment> insertStarted(SqlClient tx, Order order, IdempotencyKey key, String cardToken, String processorKey, Duration lease) {
        return tx.preparedQuery(INSERT_STARTED)
                .execute(Tuple.of(order.id(), order.userId(), order.amount(), order.currency(), key.value(), cardToken)
                        .addString(processorKey).addLong(micros(lease)).addLong(micros(lease)))
                .map(rows -> new CardPayment(rows.property(MySQLClient.LAST_INSERTED_ID), order.id(), order.userId(), order.amount(),
                        order.currency(), PaymentPhase.STARTED, key, cardToken, processorKey, null, null, 0));
    }

    /** The declined payment made under {@code processorKey}, or null. */
    Uni<CardDecline> findDeclined(SqlClient client, String processorKey) {
        return client.preparedQuery(SELECT_DECLINED_BY_PROCESSOR_KEY).execute(Tuple.of(processorKey)).map(rows -> {
            var iterator = rows.iterator();
            if (!iterator.hasNext()) {
                return null;
            }
            Row row = iterator.next();
            return new CardDecline(row.getLong("id"), row.getString("decline_code"));
        });
    }

    /** CHARGE_SENT, with its history line: the first send is this worker's to make ({@code payment}'s next attempt). */
    @Override
    public Uni<Boolean> markSent(SqlConnection tx, CardPayment payment, Duration lease) {
        return moved(tx.preparedQuery(MARK_SENT).execute(Tuple.of(micros(lease), micros(lease), payment.id(), payment.attempts())))
                .call(sent -> sent ? recordPhase(tx, payment.id(), PaymentPhase.CHARGE_SENT, null) : Uni.createFrom().voidItem());
    }

    @Override
    public Uni<Boolean> markResent(SqlClient client, CardPayment payment, Duration window) {
        return moved(client.preparedQuery(MARK_RESENT).execute(Tuple.of(payment.id(), payment.attempts(), micros(window))));
    }

    @Override
    public Uni<Boolean> takeLease(SqlClient client, CardPayment payment, Duration lease) {
        return moved(client.preparedQuery(TAKE_LEASE).execute(Tuple.of(micros(lease), micros(lease), payment.id(), payment.attempts())));
    }

    /**
     * True when this moved the payment to SUCCEEDED, false when it was settled already.
     *
     * @throws ProcessorIdTaken when another payment holds {@code chargeId}
     */
    Uni<Boolean> succeed(SqlClient tx, long id, String chargeId) {
        return moved(ProcessorIdTaken.recordedOnce(tx.preparedQuery(SUCCEED).execute(Tuple.of(chargeId, id)), chargeId));
    }

    /** As {@link #succeed}, to DECLINED; a decline that names no charge ({@code chargeId} null) is never taken. */
    Uni<Boolean> decline(SqlClient tx, long id, String chargeId, String declineCode) {
        return moved(ProcessorIdTaken.recordedOnce(tx.preparedQuery(DECLINE).execute(Tuple.of(chargeId, declineCode, id)), chargeId));
    }

    /**
     * {@code neverSent}: no send of the charge has reached the processor so far (none was recorded
     * when this worker took the payment, and its own could not connect), so the resend window has
     * not started yet; believed only while {@code payment}'s attempts are still the payment's.
     */
    Uni<Boolean> markUnknown(SqlClient tx, CardPayment payment, Duration firstBackoff, Duration maxBackoff, boolean neverSent) {
        return moved(tx.preparedQuery(MARK_UNKNOWN).execute(Tuple.of(micros(firstBackoff), micros(maxBackoff), neverSent,
                payment.attempts(), payment.attempts(), payment.id())));
    }

    Uni<CardPayment> findByOrderAndKey(SqlClient client, long orderId, IdempotencyKey key) {
        return client.preparedQuery(SELECT_BY_ORDER_AND_KEY).execute(Tuple.of(orderId, key.value())).map(CardPaymentRepository::single);
    }

    /** The card payment whose charge is made under {@code processorKey}, locked until {@code tx} ends; null if none is. */
    Uni<CardPayment> lockByProcessorKey(SqlConnection tx, String processorKey) {
        return tx.preparedQuery(SELECT_BY_PROCESSOR_KEY_FOR_UPDATE).execute(Tuple.of(processorKey)).map(CardPaymentRepository::single);
    }

    @Override
    public Uni<List<CardPayment>> findUnattended(SqlClient client, int limit) {
        return client.preparedQuery(SELECT_UNATTENDED).execute(Tuple.of(limit)).map(rows -> {
            List<CardPayment> payments = new ArrayList<>();
            rows.forEach(row -> payments.add(from(row)));
            return payments;
        });
    }

    @Override
    public Uni<Long> countOverdue(SqlClient client, Duration age) {
        return client.preparedQuery(COUNT_OVERDUE).execute(Tuple.of(micros(age))).map(rows -> rows.iterator().next().getLong("overdue"));
    }

    /** One line of the payment's history; {@code detail} is plain words for its owner, never a token. */
    Uni<Void> recordPhase(SqlClient tx, long paymentId, PaymentPhase phase, String detail) {
        return recordPhase(tx, paymentId, phase, detail, null);
    }

    /** {@code eventId}: the processor's webhook event whose delivery moved the payment into {@code phase}, or null. */
    Uni<Void> recordPhase(SqlClient tx, long paymentId, PaymentPhase phase, String detail, String eventId) {
        return tx.preparedQuery(INSERT_PHASE).execute(Tuple.of(paymentId, phase.name(), detail, eventId)).replaceWithVoid();
    }

    static Uni<Boolean> moved(Uni<RowSet<Row>> update) {
        return update.map(rows -> rows.rowCount() == 1);
    }

    static long micros(Duration duration) {
        return duration.toNanos() / 1000;
    }

    private static CardPayment single(RowSet<Row> rows) {
        var iterator = rows.iterator();
        return iterator.hasNext() ? from(iterator.next()) : null;
    }

    /** A payment from a row of {@link #COLUMNS}. */
    static CardPayment from(Row row) {
        Long sentMicrosAgo = row.getLong("sent_micros_ago");
        return new CardPayment(row.getLong("id"), row.getLong("order_id"), row.getString("user_id"), row.getLong("amount"),
                row.getString("currency"), PaymentPhase.valueOf(row.getString("phase")), new IdempotencyKey(row.getString("idem_key")),
                row.getString("card_token"), row.getString("processor_key"), row.getString("processor_charge_id"),
                sentMicrosAgo == null ? null : Duration.ofNanos(sentMicrosAgo * 1000), row.getInteger("charge_attempts"));
    }
}
