package io.payonce.payment.operation;

import io.payonce.errors.ErrorCode;
import io.payonce.processor.ProcessorOutcome;
import io.smallrye.mutiny.Uni;

/**
 * What a kind of processor operation gives the lifecycle: its words, how its outcomes {@code R} are
 * recorded ({@link OperationSettlement}, which holds its table's statements too), and two hooks: its
 * call to the processor and its lookup. The lifecycle ({@link Lifecycle}) owns the rest: the lease,
 * the first send, the lookup and the resend window, the takeover and the recovery job, which finds
 * every kind. A kind is a {@code @Singleton}: the lifecycle reads what it was given.
 */
public abstract class OperationKind<O extends Operation<O>, R extends ProcessorOutcome> {

    /**
     * The kind's words: its {@code name} as a log line begins with it ("Card payment"); the refusal a
     * retry meets while another worker holds the operation and no answer is stored yet
     * ({@code pending}); and the gauge of its operations unsettled a minute after they began, with its
     * description.
     */
    public record Words(String name, ErrorCode pending, String overdueGauge, String overdueDescription) {
    }

    final Words words;
    final OperationSettlement<O, R, ?> settlement;

    protected OperationKind(Words words, OperationSettlement<O, R, ?> settlement) {
        this.words = words;
        this.settlement = settlement;
    }

    /** The call itself, under the operation's processor key. */
    protected abstract Uni<R> send(O operation);

    /** What the processor holds under the operation's key. */
    protected abstract Uni<R> lookUp(O operation);

    OperationStore<O> store() {
        return settlement.rows();
    }
}
