package io.payonce.payment.operation;

import io.payonce.errors.ErrorCode;
import io.payonce.idempotency.KeyedWrite;
import io.payonce.idempotency.WithRecord;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * The hooks a kind gives an operator's settlement ({@link OperatorSettlements}): how it finds the
 * operation, what the processor must confirm of the operator's claim {@code C}, how its outcomes are
 * recorded ({@link OperationSettlement}, as the processor's own would be), and the audit row and
 * event that name the operator. The flow, its order, its compare-and-set and its refusals are the
 * lifecycle's.
 */
public interface OperatorSettlementKind<O extends Operation<O>, C extends OperatorClaim> {

    /**
     * The kind's words: the refusal for an id no operation of the kind has, and for a processor object
     * another operation recorded already; the failure code a settlement as failed records; and how many
     * characters of what the processor said its audit row keeps.
     */
    record Words(ErrorCode notFound, ErrorCode recordedElsewhere, String settledFailureCode, int mostSaid) {
    }

    Words words();

    /** The operation beside {@code write}'s record; null beside it when no operation has that id. */
    Uni<WithRecord<SettlementTarget<O>>> findWithRecord(SqlClient client, long id, KeyedWrite write);

    /** The operation as it stands now. */
    Uni<SettlementTarget<O>> find(SqlClient client, long id);

    /**
     * What the processor says, in words for the audit row, asked outside any transaction, once it
     * confirms {@code claim}.
     *
     * @throws io.payonce.errors.ApiException PROCESSOR_UNAVAILABLE without a clear answer, PROCESSOR_DISAGREES where it
     *                                        says otherwise
     */
    Uni<String> askProcessor(O operation, C claim);

    /** How the kind records an outcome: what it locks first, and the rest once the phase has moved. */
    OperationSettlement<O, ?, ?> outcomes();

    /**
     * In {@code tx}, once the settled outcome is recorded: the audit row naming the operator
     * ({@code write}'s scope) with what the processor {@code said}, and the settlement's event. The
     * operator's answer's body.
     */
    Uni<Object> audit(SqlConnection tx, O operation, C claim, KeyedWrite write, String said);
}
