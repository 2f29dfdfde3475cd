package io.payonce.payment.operation;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.events.EventType;
import io.payonce.idempotency.KeyedWrite;
import io.payonce.idempotency.WithRecord;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;

/**
 * What a kind gives an operator's settlement ({@link OperatorSettlements}): its words, how it finds
 * the operation, how its outcomes are recorded ({@link OperationKind}), and two hooks: what the
 * processor must confirm of the operator's claim {@code C}, and the audit row that names the
 * operator. The rest is the flow's. A kind is a {@code @Singleton}: the flow reads what it was given.
 */
public abstract class OperatorSettlementKind<O extends Operation<O>, C extends OperatorClaim> {

    /**
     * The kind's words: the refusal for an id no operation of the kind has, and for a processor object
     * another operation recorded already; the failure code a settlement as failed records; how many
     * characters of what the processor said its audit row keeps; and the event a settlement writes.
     */
    public record Words(ErrorCode notFound, ErrorCode recordedElsewhere, String settledFailureCode, int mostSaid, EventType settled) {
    }

    /** How a kind's operations are found for a settlement. */
    public interface Targets<O extends Operation<O>> {

        /** The operation beside {@code write}'s record; null beside it when no operation has that id. */
        Uni<WithRecord<SettlementTarget<O>>> findWithRecord(SqlClient client, long id, KeyedWrite write);

        /** The operation as it stands now. */
        Uni<SettlementTarget<O>> find(SqlClient client, long id);

        /** As {@link #findWithRecord(SqlClient, long, KeyedWrite)}, refused {@code notFound} when no operation has that id. */
        default Uni<WithRecord<SettlementTarget<O>>> findWithRecord(SqlClient client, long id, KeyedWrite write, ErrorCode notFound) {
            return findWithRecord(client, id, write).map(found -> found.map(target -> {
                if (target == null) {
                    throw new ApiException(notFound, id);
                }
                return target;
            }));
        }
    }

    final Words words;
    final Targets<O> targets;
    final OperationKind<O, ?, ?> outcomes;

    protected OperatorSettlementKind(Words words, Targets<O> targets, OperationKind<O, ?, ?> outcomes) {
        this.words = words;
        this.targets = targets;
        this.outcomes = outcomes;
    }

    /**
     * What the processor says, in words for the audit row, asked outside any transaction, once it
     * confirms {@code claim} ({@link Verdicts}).
     */
    protected abstract Uni<String> askProcessor(O operation, C claim);

    /**
     * In {@code tx}, once the settled outcome is recorded: the audit row naming the operator
     * ({@code write}'s scope) with what the processor {@code said}. The operator's answer's body.
     */
    protected abstract Uni<Object> audit(SqlConnection tx, O operation, C claim, KeyedWrite write, String said);
}
