package io.payonce.payment.operation;

import io.payonce.config.PayonceConfig;
import io.payonce.db.Transactions;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.Begun;
import io.payonce.idempotency.KeyAnswers;
import io.payonce.idempotency.KeyedWrite;
import io.payonce.processor.ProcessorOutcome;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;
import java.util.function.Supplier;

/**
 * One lifecycle for every operation at the processor, whatever its kind: the calls are made outside
 * any transaction, always under the operation's own processor key, by the one worker that holds its
 * lease; whatever they return goes to the kind's {@link OperationKind#settle}. The request and a
 * retry of it (both through {@link #proceed}) and the recovery job all drive an operation through
 * {@link #advance}, from the last phase committed (brandur's recovery points): a phase is committed
 * before the call it allows.
 */
@ApplicationScoped
public class Lifecycle {

    /**
     * A lease covers two calls (a resumed operation may be looked up, then sent again) and half a
     * call's bound more to record the outcome before anyone else may take the operation over.
     */
    private static final int HALF_CALLS_PER_LEASE = 5;

    private final Pool pool;
    private final Transactions transactions;
    private final KeyAnswers keys;
    private final Duration lease;
    private final Duration resendWithin;

    Lifecycle(Pool pool, Transactions transactions, KeyAnswers keys, PayonceConfig config) {
        this.pool = pool;
        this.transactions = transactions;
        this.keys = keys;
        this.lease = config.processor().timeout().multipliedBy(HALF_CALLS_PER_LEASE).dividedBy(2);
        this.resendWithin = config.processor().resendWithin();
    }

    /** How long a worker owns an operation's next step: one call to the processor and the recording of its outcome. */
    public Duration lease() {
        return lease;
    }

    /**
     * Drives an operation this worker holds ({@code taken} as it holds it) to a definite outcome if the
     * processor can give one, from its recovery point:
     * <ul>
     * <li>STARTED: SENT is committed first, since from then on the processor may have acted and no one
     * assumes it did not; then the first send. A worker that finds the operation moved on (it stalled
     * past its lease and another took over) leaves it to them.</li>
     * <li>SENT or UNKNOWN: the operation is looked up by its key first, and sent again under the same
     * key only if the processor holds nothing and the first send is recent
     * ({@code payonce.processor.resend-within}, well inside the processor's key retention): a key the
     * processor no longer remembers would make a resend a second charge or refund. Past that, an
     * operation the processor cannot find stays UNKNOWN, overdue, for an operator.</li>
     * <li>SUCCEEDED or FAILED: settled already; the key's answer is the answer.</li>
     * </ul>
     */
    public <O extends Operation<O>, R extends ProcessorOutcome> Uni<Answer> advance(OperationKind<O, R, ?> kind, O taken) {
        return switch (taken.lifecyclePhase()) {
            case STARTED -> transactions.inTransaction(tx -> kind.rows.markSent(tx, taken, lease))
                    .flatMap(sent -> sent ? send(kind, taken.sent()) : kind.answerSoFar(taken));
            case SENT, UNKNOWN -> kind.lookUp(taken).flatMap(outcome -> outcome.absent()
                    ? resendWithinTheWindow(kind, taken)
                    : kind.settle(taken, outcome));
            case SUCCEEDED, FAILED -> kind.answerSoFar(taken);
        };
    }

    /**
     * Takes a keyed request on from what its first transaction began
     * ({@link io.payonce.idempotency.IdempotencyGuard#begin}), alike for every kind: an answer is the
     * answer, an operation started now is advanced, and a key an earlier request left open is a retry
     * of it, which resumes that request's operation ({@code open} reads it, null if none).
     */
    public <O extends Operation<O>, R extends ProcessorOutcome> Uni<Answer> proceed(OperationKind<O, R, ?> kind, Begun<O> begun, KeyedWrite write, Supplier<Uni<O>> open) {
        if (begun instanceof Begun.Answered<O> answered) {
            return Uni.createFrom().item(answered.answer());
        }
        if (begun instanceof Begun.Started<O> started) {
            return advance(kind, started.work());
        }
        Answer soFar = ((Begun.Open<O>) begun).soFar();
        return open.get().flatMap(found -> resume(kind, found, write, soFar));
    }

    /**
     * A retry of a keyed request whose operation ({@code found}, null if none) may still be in flight.
     * If nobody is working on it (its first request crashed, stalled or gave up on a lost answer),
     * the retry takes it over from its last phase; otherwise it is answered what is known so far
     * ({@code soFar}: the 202 if there is one), else the kind's 409 to come back. An operation settled
     * since the claim was read has its final answer under the key, a repeat's.
     */
    private <O extends Operation<O>, R extends ProcessorOutcome> Uni<Answer> resume(OperationKind<O, R, ?> kind, O found, KeyedWrite write, Answer soFar) {
        if (found == null || found.lifecyclePhase().definite()) {
            return keys.storedAnswer(pool, write.scope(), write.key())
                    .onItem().ifNull().failWith(() -> new ApiException(ErrorCode.IDEMPOTENCY_KEY_IN_USE))
                    .map(settled -> settled.repeatCaughtBy(write.request().keyDefence()));
        }
        return takeOver(kind, found).flatMap(answer -> {
            if (answer != null) {
                return Uni.createFrom().item(answer);
            }
            return soFar != null ? Uni.createFrom().item(soFar) : Uni.createFrom().failure(new ApiException(kind.words.pending()));
        });
    }

    /** Takes the lease of an operation nobody holds, as read, and advances it; null when another worker took it first. */
    <O extends Operation<O>, R extends ProcessorOutcome> Uni<Answer> takeOver(OperationKind<O, R, ?> kind, O read) {
        return kind.rows.takeLease(pool, read, lease)
                .flatMap(taken -> taken ? advance(kind, read.nextAttempt()) : Uni.createFrom().nullItem());
    }

    /**
     * Records the resend before making it, fenced by this worker's attempts and by the window as the
     * database sees it now: a worker whose operation another has taken over, or whose reading of the
     * window has aged past it, sends nothing, and the operation waits for its next pass.
     */
    private <O extends Operation<O>, R extends ProcessorOutcome> Uni<Answer> resendWithinTheWindow(OperationKind<O, R, ?> kind, O taken) {
        if (taken.sinceFirstSent() != null && taken.sinceFirstSent().compareTo(resendWithin) >= 0) {
            return kind.leaveUnknown(taken, "no " + kind.words.made()
                    + " found under its key, and too long after the first send to send it again");
        }
        return kind.rows.markResent(pool, taken, resendWithin)
                .flatMap(marked -> marked ? send(kind, taken.nextAttempt()) : kind.answerSoFar(taken));
    }

    private <O extends Operation<O>, R extends ProcessorOutcome> Uni<Answer> send(OperationKind<O, R, ?> kind, O operation) {
        return kind.send(operation).flatMap(outcome -> kind.settle(operation, outcome));
    }
}
