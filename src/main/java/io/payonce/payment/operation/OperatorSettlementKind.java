package io.payonce.payment.operation;

import io.payonce.errors.ApiException;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.KeyedWrite;
import io.payonce.idempotency.WithRecord;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;

import java.time.Duration;

/**
 * The hooks a kind gives an operator's settlement ({@link OperatorSettlements}): how it finds the
 * operation, what the processor must confirm of the operator's request {@code C} (its verdict
 * {@code V}, with its words for the audit row), and how a settled operation is recorded. The flow,
 * its order and its refusals are the lifecycle's.
 */
public interface OperatorSettlementKind<O extends Operation<O>, C, V> {

    /** The refusal for an id no operation of this kind has. */
    ApiException notFound(long id);

    /** The operation beside {@code write}'s record; null beside it when no operation has that id. */
    Uni<WithRecord<SettlementTarget<O>>> findWithRecord(SqlClient client, long id, KeyedWrite write);

    /** The operation as it stands now. */
    Uni<SettlementTarget<O>> find(SqlClient client, long id);

    /**
     * What the processor says, asked outside any transaction, once it confirms {@code claim}.
     *
     * @throws ApiException PROCESSOR_UNAVAILABLE without a clear answer, PROCESSOR_DISAGREES where it says otherwise
     */
    Uni<V> askProcessor(O operation, C claim);

    /**
     * In {@code tx}: the compare-and-set on all that was checked (UNKNOWN, overdue past {@code window},
     * no lease, no worker that took it since it was read), then the outcome exactly as the processor's
     * own would be recorded, the audit row (with what the {@code verdict} says) and the settlement's
     * event. The operator's answer, or null when the compare-and-set moved nothing.
     */
    Uni<Answer> record(SqlConnection tx, O operation, C claim, Duration window, KeyedWrite write, V verdict);
}
