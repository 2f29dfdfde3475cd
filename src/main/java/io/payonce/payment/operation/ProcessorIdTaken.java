package io.payonce.payment.operation;

import io.payonce.db.SqlErrors;
import io.smallrye.mutiny.Uni;

/**
 * The processor named, as one operation's outcome, a charge or refund that another operation of the
 * kind has recorded already (its processor id is UNIQUE): a processor's bug, since payonce keeps its
 * ids exactly ({@code ProcessorText.id}). It is not this operation's, whatever its amount: the
 * refused write changed nothing, and the transaction goes on (MariaDB undoes the one statement, not
 * the transaction), so the operation can be left UNKNOWN in it.
 */
public final class ProcessorIdTaken extends RuntimeException {

    private final String processorId;

    private ProcessorIdTaken(String processorId) {
        super("Processor id " + processorId + " is recorded on another operation", null, false, false);
        this.processorId = processorId;
    }

    /** {@code write} recording {@code processorId}, its unique key's refusal turned into this. */
    public static <T> Uni<T> recordedOnce(Uni<T> write, String processorId) {
        return write.onFailure(SqlErrors::isDuplicateKey).transform(duplicate -> new ProcessorIdTaken(processorId));
    }

    public String processorId() {
        return processorId;
    }
}
