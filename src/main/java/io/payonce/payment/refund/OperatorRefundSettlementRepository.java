package io.payonce.payment.refund;

import io.payonce.db.Rows;
import io.payonce.idempotency.KeyedWrite;
import io.payonce.idempotency.RecordJoin;
import io.payonce.idempotency.WithRecord;
import io.payonce.order.OrderStatus;
import io.payonce.payment.operation.Phase;
import io.payonce.payment.operation.OperatorSettlementKind;
import io.payonce.payment.operation.SettlementTarget;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;

/**
 * SQL for operator settlements of refunds to the card: a refund as the operator finds it, what
 * payonce recorded refunded of its charge, and the audit row, which the settlement's transaction
 * writes with the lifecycle's compare-and-set ({@code OperationRows}).
 */
@ApplicationScoped
class OperatorRefundSettlementRepository implements OperatorSettlementKind.Targets<CardRefund> {

    /** To the card or not: a refund to the balance is found too, to be told it is settled. */
    private static final String REFUND = "SELECT " + CardRefundRepository.COLUMNS + ", r.method, "
            + "COALESCE(r.leased_until > NOW(6), FALSE) AS leased" + CardRefundRepository.FROM + "WHERE r.id = ?";

    /** The refund as a table of its own, so that the idempotency record joined beside it may take the alias r. */
    private static final String SELECT_WITH_RECORD = "SELECT t.*, " + RecordJoin.COLUMNS + " FROM (" + REFUND + ") t " + RecordJoin.JOIN;

    /**
     * What payonce recorded of a charge's refunds, in one read: each one's processor id, its amount if
     * it SUCCEEDED (0 for the refund being settled: another operator's settlement may have made it
     * SUCCEEDED since it was read), whether it is that refund, and the processor refund a
     * CONTRADICTING event of it named (the processor failed it after it succeeded, or the other way
     * round, or named this UNKNOWN refund's outcome otherwise than it may be settled), if one did,
     * other than the failure of the very refund payonce recorded, once a reversal confirmed it. A charge pays one order, so the order's refunds
     * are all there are of it.
     */
    private static final String RECORDED_OF_CHARGE = """
            SELECT r.processor_refund_id, IF(r.phase = 'SUCCEEDED' AND r.id <> ?, r.amount, 0) AS succeeded, r.id = ? AS settled_now,
                (SELECT MIN(COALESCE(e.object_id, r.processor_refund_id, '')) FROM processor_event e
                     WHERE e.refund_id = r.id AND e.outcome = 'CONTRADICTING'
                       AND NOT (e.event_type = 'refund.failed' AND e.object_id <=> r.processor_refund_id
                                AND EXISTS (SELECT 1 FROM refund_reversal v WHERE v.refund_id = r.id))) AS contradicted_by
            FROM refund_record r WHERE r.order_id = ? AND r.processor_charge_id = ?""";

    /** One of a charge's refunds as {@link #RECORDED_OF_CHARGE} reads it; {@code contradictedBy} empty for an event that named no id. */
    record RecordedRefund(String processorRefundId, long succeeded, boolean settledNow, String contradictedBy) {
    }

    /** UNIQUE(refund_id): a refund is settled by an operator once. */
    private static final String INSERT_AUDIT = """
            INSERT INTO refund_settlement (refund_id, operator_id, idem_key, outcome, processor_refund_id, reason, processor_said,
                acknowledged)
            VALUES (?, ?, ?, ?, ?, ?, ?, ?)""";

    /** A refund that succeeded, moved to FAILED: the processor failed it since. Its processor id stays its own. */
    private static final String REVERSE = """
            UPDATE refund_record SET phase = 'FAILED', failure_code = ? WHERE id = ? AND phase = 'SUCCEEDED' AND method = 'CARD'""";

    /** PRIMARY KEY(refund_id): a refund is reversed once. */
    private static final String INSERT_REVERSAL = """
            INSERT INTO refund_reversal (refund_id, operator_id, idem_key, reason, processor_said, order_before, order_after)
            VALUES (?, ?, ?, ?, ?, ?, ?)""";

    @Override
    public Uni<WithRecord<SettlementTarget<CardRefund>>> findWithRecord(SqlClient client, long refundId, KeyedWrite write) {
        Tuple parameters = Tuple.of(refundId).addString(write.scope()).addString(write.key().value());
        return client.preparedQuery(SELECT_WITH_RECORD).execute(parameters).map(rows -> RecordJoin.first(rows, OperatorRefundSettlementRepository::from));
    }

    @Override
    public Uni<SettlementTarget<CardRefund>> find(SqlClient client, long refundId) {
        return client.preparedQuery(REFUND).execute(Tuple.of(refundId)).map(rows -> from(Rows.first(rows)));
    }

    /** What payonce recorded of the refunds of {@code refund}'s charge, {@code refund} among them. */
    Uni<List<RecordedRefund>> recordedOfCharge(SqlClient client, CardRefund refund) {
        Tuple parameters = Tuple.of(refund.id(), refund.id(), refund.orderId(), refund.chargeId());
        return client.preparedQuery(RECORDED_OF_CHARGE).execute(parameters).map(rows -> rows.stream()
                .map(row -> new RecordedRefund(row.getString("processor_refund_id"), row.getLong("succeeded"), row.getLong("settled_now") != 0,
                        row.getString("contradicted_by"))).toList());
    }

    /** The audit row of {@code write}'s operator (its scope) and key. */
    Uni<Void> insertAudit(SqlClient tx, long refundId, KeyedWrite write, RefundSettlementRequest request, String processorSaid) {
        return tx.preparedQuery(INSERT_AUDIT).execute(Tuple.of(refundId, write.scope(), write.key().value(), request.outcomeText(),
                request.processorIdShown(), request.reason()).addString(processorSaid)
                .addString(request.acknowledgedRefunds().isEmpty() ? null : String.join(",", request.acknowledgedRefunds())))
                .replaceWithVoid();
    }

    /** True when this reversal moved refund {@code refundId} from SUCCEEDED to FAILED. */
    Uni<Boolean> reverse(SqlClient tx, long refundId, String failureCode) {
        return tx.preparedQuery(REVERSE).execute(Tuple.of(failureCode, refundId)).map(rows -> rows.rowCount() == 1);
    }

    /** The reversal's audit row, of {@code write}'s operator (its scope) and key, with the order's status before and after. */
    Uni<Void> insertReversal(SqlClient tx, long refundId, KeyedWrite write, String reason, String processorSaid, OrderStatus before,
                             OrderStatus after) {
        return tx.preparedQuery(INSERT_REVERSAL).execute(Tuple.of(refundId, write.scope(), write.key().value(), reason, processorSaid,
                before.name()).addString(after.name())).replaceWithVoid();
    }

    /** A refund to the balance has no key of its own to read: it was SUCCEEDED from its first commit. */
    private static SettlementTarget<CardRefund> from(Row row) {
        RefundPhase phase = RefundPhase.valueOf(row.getString("phase"));
        CardRefund card = "CARD".equals(row.getString("method")) ? CardRefundRepository.from(row) : null;
        return new SettlementTarget<>("Refund " + row.getLong("id"), Phase.valueOf(phase.name()), phase.name(), card,
                row.getLong("leased") != 0);
    }
}
