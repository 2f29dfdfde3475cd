package io.payonce.payment.card;

import io.payonce.db.Rows;
import io.payonce.db.SqlErrors;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.idempotency.KeyedWrite;
import io.payonce.idempotency.RecordJoin;
import io.payonce.idempotency.WithRecord;
import io.payonce.payment.operation.OperationRows;
import io.payonce.payment.operation.SettlementTarget;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;

/**
 * SQL for operator settlements: a payment as the operator finds it, the compare-and-set that settles
 * it, and the audit row, which the settlement's transaction writes with it.
 */
@ApplicationScoped
class OperatorSettlementRepository {

    private static final String LEASED = "COALESCE(p.leased_until > NOW(6), FALSE) AS leased";

    /** Card or not: a balance payment is found too, to be told it is settled. */
    private static final String SELECT_WITH_RECORD = "SELECT " + CardPaymentRepository.COLUMNS + ", " + LEASED + ", " + RecordJoin.COLUMNS
            + " FROM pay_record p " + RecordJoin.JOIN + " WHERE p.id = ?";

    private static final String SELECT = "SELECT " + CardPaymentRepository.COLUMNS + ", " + LEASED + " FROM pay_record p WHERE p.id = ?";

    /**
     * The settlement's compare-and-set, on all the operator checked: UNKNOWN, overdue, no lease, and
     * no worker that took the payment since it was read (charge_attempts counts every lease taken).
     */
    private static final String SETTLEABLE = " WHERE id = ? AND phase = 'UNKNOWN' AND charge_attempts = ? "
            + "AND (leased_until IS NULL OR leased_until <= NOW(6)) AND first_sent_at < NOW(6) - INTERVAL ? MICROSECOND";

    private static final String SUCCEED = "UPDATE pay_record SET phase = 'SUCCEEDED', processor_charge_id = ?, busy_until = NULL, "
            + "leased_until = NULL" + SETTLEABLE;

    /** DECLINED takes the payment off its order (live_order_id), which can be paid again. */
    private static final String DECLINE = "UPDATE pay_record SET phase = 'DECLINED', decline_code = ?, busy_until = NULL, "
            + "leased_until = NULL" + SETTLEABLE;

    /** UNIQUE(payment_id): a payment is settled by an operator once. */
    private static final String INSERT_AUDIT = """
            INSERT INTO operator_settlement (payment_id, operator_id, idem_key, outcome, charge_id, reason, processor_said)
            VALUES (?, ?, ?, ?, ?, ?, ?)""";

    /** The payment beside {@code write}'s record; null beside it when no payment has that id. */
    Uni<WithRecord<SettlementTarget<CardPayment>>> findWithRecord(SqlClient client, long paymentId, KeyedWrite write) {
        return client.preparedQuery(SELECT_WITH_RECORD).execute(RecordJoin.parameters(write).addLong(paymentId)).map(rows -> {
            Row row = Rows.first(rows);
            return row == null ? new WithRecord<>(null, null) : new WithRecord<>(from(row), RecordJoin.record(row));
        });
    }

    Uni<SettlementTarget<CardPayment>> find(SqlClient client, long paymentId) {
        return client.preparedQuery(SELECT).execute(Tuple.of(paymentId)).map(rows -> from(Rows.first(rows)));
    }

    /**
     * Settles {@code payment} as charged by {@code chargeId}, if it still is as the operator found it
     * ({@link CardPayment#attempts}) and overdue past {@code window}; true when this moved it.
     *
     * @throws ApiException CHARGE_ALREADY_RECORDED when another payment holds {@code chargeId} (UNIQUE(processor_charge_id))
     */
    Uni<Boolean> succeed(SqlClient tx, CardPayment payment, String chargeId, Duration window) {
        return OperationRows.moved(tx.preparedQuery(SUCCEED).execute(settleable(Tuple.of(chargeId), payment, window))
                .onFailure(SqlErrors::isDuplicateKey).transform(duplicate -> new ApiException(ErrorCode.CHARGE_ALREADY_RECORDED, chargeId)));
    }

    /** As {@link #succeed}, settling it as not charged, with {@code declineCode}. */
    Uni<Boolean> decline(SqlClient tx, CardPayment payment, String declineCode, Duration window) {
        return OperationRows.moved(tx.preparedQuery(DECLINE).execute(settleable(Tuple.of(declineCode), payment, window)));
    }

    Uni<Void> insertAudit(SqlClient tx, long paymentId, String operatorId, String key, SettlementRequest request, String processorSaid) {
        return tx.preparedQuery(INSERT_AUDIT).execute(Tuple.of(paymentId, operatorId, key, request.outcome().text(), request.chargeId(),
                request.reason()).addString(processorSaid)).replaceWithVoid();
    }

    private static Tuple settleable(Tuple tuple, CardPayment payment, Duration window) {
        return tuple.addLong(payment.id()).addInteger(payment.attempts()).addLong(OperationRows.micros(window));
    }

    /** Card or not: a balance payment is SUCCEEDED from its first commit, and only told so. */
    private static SettlementTarget<CardPayment> from(Row row) {
        CardPayment payment = CardPaymentRepository.from(row);
        return new SettlementTarget<>("Payment " + payment.id(), payment.lifecyclePhase(), payment.phase().name(), payment,
                row.getLong("leased") != 0);
    }
}
