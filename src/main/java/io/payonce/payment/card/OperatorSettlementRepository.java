package io.payonce.payment.card;

import io.payonce.db.Rows;
import io.payonce.idempotency.KeyedWrite;
import io.payonce.idempotency.RecordJoin;
import io.payonce.idempotency.WithRecord;
import io.payonce.payment.operation.OperatorSettlementKind;
import io.payonce.payment.operation.SettlementTarget;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * SQL for operator settlements: a payment as the operator finds it, and the audit row, which the
 * settlement's transaction writes with the lifecycle's compare-and-set ({@code OperationRows}).
 */
@ApplicationScoped
class OperatorSettlementRepository implements OperatorSettlementKind.Targets<CardPayment> {

    private static final String LEASED = "COALESCE(p.leased_until > NOW(6), FALSE) AS leased";

    /** Card or not: a balance payment is found too, to be told it is settled. */
    private static final String SELECT_WITH_RECORD = "SELECT " + CardPaymentRepository.COLUMNS + ", " + LEASED + ", " + RecordJoin.COLUMNS
            + " FROM pay_record p " + RecordJoin.JOIN + " WHERE p.id = ?";

    private static final String SELECT = "SELECT " + CardPaymentRepository.COLUMNS + ", " + LEASED + " FROM pay_record p WHERE p.id = ?";

    /** UNIQUE(payment_id): a payment is settled by an operator once. */
    private static final String INSERT_AUDIT = """
            INSERT INTO operator_settlement (payment_id, operator_id, idem_key, outcome, charge_id, reason, processor_said)
            VALUES (?, ?, ?, ?, ?, ?, ?)""";

    @Override
    public Uni<WithRecord<SettlementTarget<CardPayment>>> findWithRecord(SqlClient client, long paymentId, KeyedWrite write) {
        return client.preparedQuery(SELECT_WITH_RECORD).execute(RecordJoin.parameters(write).addLong(paymentId)).map(rows -> RecordJoin.first(rows, OperatorSettlementRepository::from));
    }

    @Override
    public Uni<SettlementTarget<CardPayment>> find(SqlClient client, long paymentId) {
        return client.preparedQuery(SELECT).execute(Tuple.of(paymentId)).map(rows -> from(Rows.first(rows)));
    }

    /** The audit row of {@code write}'s operator (its scope) and key. */
    Uni<Void> insertAudit(SqlClient tx, long paymentId, KeyedWrite write, SettlementRequest request, String processorSaid) {
        return tx.preparedQuery(INSERT_AUDIT).execute(Tuple.of(paymentId, write.scope(), write.key().value(), request.outcomeText(),
                request.processorIdShown(), request.reason()).addString(processorSaid)).replaceWithVoid();
    }

    /** Card or not: a balance payment is SUCCEEDED from its first commit, and only told so. */
    private static SettlementTarget<CardPayment> from(Row row) {
        CardPayment payment = CardPaymentRepository.from(row);
        return new SettlementTarget<>("Payment " + payment.id(), payment.lifecyclePhase(), payment.phase().name(), payment,
                row.getLong("leased") != 0);
    }
}
