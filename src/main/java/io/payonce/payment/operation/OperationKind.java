package io.payonce.payment.operation;

import io.payonce.errors.ErrorCode;
import io.payonce.idempotency.Answer;
import io.smallrye.mutiny.Uni;

/**
 * The hooks a kind of processor operation gives the lifecycle: its table, its calls to the processor
 * and what their outcome {@code R} does. The lifecycle ({@link Lifecycle}) owns the rest: the lease,
 * the first send, the lookup and the resend window, the takeover and the recovery job. A kind is an
 * application-scoped bean; the recovery job finds every one.
 */
public interface OperationKind<O extends Operation<O>, R> {

    /** The kind as a log line begins with it: "Card payment", "Refund to the card". */
    String name();

    /** What the processor makes of it, in its history's words: "charge", "refund". */
    String madeAtProcessor();

    OperationStore<O> store();

    /** The call itself, under the operation's processor key. */
    Uni<R> send(O operation);

    /** What the processor holds under the operation's key. */
    Uni<R> lookUp(O operation);

    /** Whether {@code outcome} says the processor holds nothing under the key. */
    boolean isAbsent(R outcome);

    /** An outcome that is not definite, for {@code reason}: the operation waits for the recovery job. */
    R unknown(String reason);

    /** Records {@code outcome}, whatever it is, and answers with the key's answer. */
    Uni<Answer> settle(O operation, R outcome);

    /** What the operation's key answers now, for a worker that found it taken over or settled by another. */
    Uni<Answer> answerSoFar(O operation);

    /** The refusal a retry meets while another worker holds the operation and no answer is stored yet. */
    ErrorCode pending();

    /** The gauge of this kind's operations unsettled a minute after they began, and its description. */
    String overdueGauge();

    String overdueDescription();
}
