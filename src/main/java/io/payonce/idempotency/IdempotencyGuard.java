package io.payonce.idempotency;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.payonce.db.SqlErrors;
import io.payonce.db.Transactions;
import io.payonce.db.UniqueKey;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.metrics.PayonceMetrics;
import io.payonce.metrics.RepeatDefence;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Runs a write under its key, in one transaction with the money it moves: claim the key, do the
 * work, store the answer, commit. A repeat finds the claim and replays the stored answer; a crash
 * before COMMIT rolls back the claim with the work, so no half-done write and no stuck claim can
 * survive. Two lifecycles: a write done in one transaction ({@link #run}), and one that goes on
 * after its first ({@link #begin}, completed through {@link KeyAnswers} on whichever instance learns
 * its outcome). Either counts, times and logs its answer once and runs to its end even if the client
 * goes away. Around them: {@link #read} a request's key at the edge, and {@link #firstRead} a
 * finished key's answer before any lock or transaction. These are its only doors; the primitives a
 * caller's own transaction uses (what a key answers, a begun write's answer, a pipelined claim) are
 * {@link KeyAnswers}'.
 */
@ApplicationScoped
public class IdempotencyGuard {

    private static final Logger LOG = Logger.getLogger(IdempotencyGuard.class);

    private final Pool pool;
    private final Transactions transactions;
    private final IdempotencyRepository records;
    private final ObjectMapper json;
    private final AnswerMeter meter;
    private final PayonceMetrics metrics;
    private final Detached detached;
    private final KeyAnswers keys;

    IdempotencyGuard(Pool pool, Transactions transactions, IdempotencyRepository records, ObjectMapper json, AnswerMeter meter,
                     PayonceMetrics metrics, Detached detached, KeyAnswers keys) {
        this.pool = pool;
        this.transactions = transactions;
        this.records = records;
        this.json = json;
        this.meter = meter;
        this.metrics = metrics;
        this.detached = detached;
        this.keys = keys;
    }

    /** The request a key header names, on {@code targetId}; a missing or malformed key is a 400 and stores nothing. */
    public KeyedRequest read(WriteOperation operation, Object targetId, String keyHeader, String instance) {
        try {
            return new KeyedRequest(operation, operation.target(targetId), IdempotencyKey.required(keyHeader), instance,
                    RepeatDefence.IDEMPOTENCY_KEY).tagged();
        } catch (ApiException invalidKey) {
            meter.rejected(operation);
            throw invalidKey;
        }
    }

    /**
     * The stored-answer-first step. {@code read} brings the row the write needs and, in the same
     * statement, the key's record ({@link RecordJoin}), so that a repeat of a finished write is
     * answered from one read, counted and timed, before it takes a lock or opens a transaction; any
     * other request goes on with the write, {@code proceed} given the row. A refusal of {@code read}'s
     * own (an order the caller may not pay) comes before anything the key holds is looked at.
     */
    public <T> Uni<Answer> firstRead(KeyedWrite write, Uni<WithRecord<T>> read, Function<T, Uni<Answer>> proceed) {
        WriteOperation operation = write.operation();
        return metrics.timedIfAnswered(operation.tag(), read.map(found -> Looked.of(found, write)), Looked::answered)
                .flatMap(looked -> looked.answered()
                        ? meter.counted(operation, looked.reply().invoke(answer -> log(write, answer)))
                        : proceed.apply(looked.row()));
    }

    /** Runs {@code work} once per key, in the transaction that claims the key, and answers every repeat with the first answer. */
    public Uni<Answer> run(KeyedWrite write, Function<SqlConnection, Uni<Answer>> work) {
        return answered(write, claimAndRun(write, work));
    }

    /**
     * Like {@link #run}, once {@code turn} lets the write run now: the turn is taken before the claim
     * and given back only after the transaction has ended. A write refused its turn (a twin holds the
     * pay lock; Redis does not know, or cannot vouch for, a submit token) is a repeat that cannot run
     * now: its key's stored answer answers it, or, while there is none, the turn's refusal.
     */
    public Uni<Answer> run(KeyedWrite write, Uni<Turn> turn, Function<SqlConnection, Uni<Answer>> work) {
        return run(write, turn, Uni.createFrom().nullItem(), work);
    }

    /**
     * Like {@link #run(KeyedWrite, Uni, Function)}, trying {@code pipelined} first once the turn is
     * taken: the first run of the write with its claim and stored answer in it, sent in a few round
     * trips ({@link io.payonce.db.PipelinedTransactions}), whose answer is the committed write's. Null
     * from it means it committed nothing: a repeat, a refusal or a deadlock rolled it back, and the
     * sequential transaction, a fresh one under the same key, decides the request as it always has.
     */
    public Uni<Answer> run(KeyedWrite write, Uni<Turn> turn, Uni<Answer> pipelined, Function<SqlConnection, Uni<Answer>> work) {
        return answered(write, turn.flatMap(now -> now.isTaken()
                ? pipelined.onItem().ifNull().switchTo(() -> claimAndRun(write, work)).eventually(now::giveBack)
                : records.find(pool, write).map(record -> finishedAnswer(record, write)).onItem().ifNull().failWith(now.refusal())));
    }

    /**
     * Begins a write that goes on after its first transaction, such as a card payment that waits
     * for its processor: claims the key and runs {@code start} in one transaction. A start that ends
     * there (a repeat it finds, a recorded refusal) has its answer stored as {@link #run} stores it; a
     * start that goes on leaves the claim open (PROCESSING) for its settlement to complete, on
     * whichever instance learns the outcome ({@link KeyAnswers#settle}). A key that an earlier request claimed that way, for the
     * same request, comes back {@link Begun.Open}: the caller resumes the write instead of starting it
     * again. {@code proceed} takes the write on from what began, after the transaction.
     */
    public <T> Uni<Answer> begin(KeyedWrite write, Function<SqlConnection, Uni<Begun<T>>> start, Function<Begun<T>, Uni<Answer>> proceed) {
        Uni<Begun<T>> begun = transactions.<Begun<T>>inTransaction(tx -> claimed(records.claim(tx, write)).flatMap(claimed -> claimed
                        ? startClaimed(tx, write, start)
                        : records.find(tx, write).map(record -> IdempotencyGuard.<T>openOrReplayed(record, write))))
                .onFailure(Refused.class).recoverWithUni(refused -> recordRefusal(write, ((Refused) refused).problem()).map(Begun::<T>answered));
        return answered(write, begun.flatMap(proceed::apply));
    }

    /**
     * The answer of a keyed write, counted, timed and logged once, when it is final. Subscribed to
     * once, so that it runs to its end even if the client goes away: whatever follows a transaction
     * that may still commit (storing the answer, giving back a turn) waits for that end.
     */
    private Uni<Answer> answered(KeyedWrite write, Uni<Answer> answer) {
        WriteOperation operation = write.operation();
        return detached.toTheEnd(meter.counted(operation, metrics.timed(operation.tag(), answer).invoke(given -> log(write, given))));
    }

    private Uni<Answer> claimAndRun(KeyedWrite write, Function<SqlConnection, Uni<Answer>> work) {
        return transactions.inTransaction(tx -> claimOrReplay(tx, write, work))
                .onFailure(Refused.class).recoverWithUni(refused -> recordRefusal(write, ((Refused) refused).problem()));
    }

    private Uni<Answer> claimOrReplay(SqlConnection tx, KeyedWrite write, Function<SqlConnection, Uni<Answer>> work) {
        return claimed(records.claim(tx, write))
                .flatMap(claimed -> claimed ? execute(tx, write, work) : replayInTransaction(tx, write));
    }

    /**
     * True when {@code claim} took the key, false when a finished twin holds it. A claim that waited
     * out the session's lock wait on a twin's uncommitted claim is answered 409 here, before
     * {@link Transactions} could take the lock-wait timeout for a transient failure and run the whole
     * transaction again: the twin is alive and working, and the client should be told to retry after
     * it, not be held for another lock wait.
     */
    private static Uni<Boolean> claimed(Uni<Void> claim) {
        return UniqueKey.insertOr(claim.replaceWith(true), () -> Uni.createFrom().item(false))
                .onFailure(SqlErrors::isLockWaitTimeout).transform(e -> new ApiException(ErrorCode.IDEMPOTENCY_KEY_IN_USE));
    }

    /**
     * Runs the work and stores its answer. A recorded business failure (402, 404, 409) leaves the
     * transaction as {@link Refused}, so that the work's writes roll back with the claim and no
     * savepoint is needed on the way that succeeds.
     */
    private Uni<Answer> execute(SqlConnection tx, KeyedWrite write, Function<SqlConnection, Uni<Answer>> work) {
        return refusalsRecorded(tx, work).flatMap(answer -> store(tx, write, answer));
    }

    private static <T> Uni<T> refusalsRecorded(SqlConnection tx, Function<SqlConnection, Uni<T>> work) {
        return Uni.createFrom().deferred(() -> work.apply(tx))
                .onFailure(IdempotencyGuard::isRecorded).transform(failure -> new Refused((ApiException) failure));
    }

    /** Runs the start of a key just claimed; an answer it ends with is stored, a write it starts leaves the claim open. */
    private <T> Uni<Begun<T>> startClaimed(SqlConnection tx, KeyedWrite write, Function<SqlConnection, Uni<Begun<T>>> start) {
        return refusalsRecorded(tx, start).flatMap(started -> started instanceof Begun.Answered<T> answered
                ? store(tx, write, answered.answer()).map(Begun::<T>answered)
                : Uni.createFrom().item(started));
    }

    /** A finished key replays; an open one, for the same request, is the begun write to resume, with its answer so far. */
    private static <T> Begun<T> openOrReplayed(IdempotencyRecord record, KeyedWrite write) {
        if (record == null) {
            throw new ApiException(ErrorCode.IDEMPOTENCY_KEY_IN_USE);
        }
        requireSameRequest(record, write);
        Answer stored = IdempotencyRecord.answerOf(record, write.request().keyDefence());
        return record.done() ? Begun.answered(stored) : new Begun.Open<>(stored);
    }

    /**
     * Stores a refusal as the key's answer, in a short transaction of its own that claims the key
     * already answered. A twin that claimed the key in the moment between the two transactions has
     * the key's answer, and this request replays it: whichever is stored first is the answer of all.
     */
    private Uni<Answer> recordRefusal(KeyedWrite write, ApiException refusal) {
        Answer answer = Answer.problem(refusal, write.instance());
        String body = answer.bodyJson(json);
        return transactions.inTransaction(tx -> claimed(records.claimAnswered(tx, write, answer.status(), body))
                .flatMap(claimed -> claimed ? Uni.createFrom().item(answer.withJson(body)) : replayInTransaction(tx, write)));
    }

    private Uni<Answer> store(SqlClient tx, KeyedWrite write, Answer answer) {
        return keys.settle(tx, write.scope(), write.key(), answer);
    }

    /** A key held by another request is a 422 at once, even while that request is still open; the same request's answer replays. */
    private Uni<Answer> replayInTransaction(SqlConnection tx, KeyedWrite write) {
        return records.find(tx, write).map(record -> {
            if (record == null) {
                throw new ApiException(ErrorCode.IDEMPOTENCY_KEY_IN_USE);
            }
            requireSameRequest(record, write);
            if (!record.done()) {
                throw new ApiException(ErrorCode.IDEMPOTENCY_KEY_IN_USE);
            }
            return IdempotencyRecord.answerOf(record, write.request().keyDefence());
        });
    }

    /** The answer a finished write's record replays to a repeat of it; null while the write has not finished. */
    private static Answer finishedAnswer(IdempotencyRecord record, KeyedWrite write) {
        if (record == null || !record.done()) {
            return null;
        }
        requireSameRequest(record, write);
        return IdempotencyRecord.answerOf(record, write.request().keyDefence());
    }

    /** A key reused for another request is a 422, whatever its record holds. */
    private static void requireSameRequest(IdempotencyRecord record, KeyedWrite write) {
        if (!record.fingerprint().equals(write.fingerprint().sha256())) {
            throw new ApiException(ErrorCode.IDEMPOTENCY_KEY_REUSED, String.join(", ", differences(record, write)));
        }
    }

    private static List<String> differences(IdempotencyRecord record, KeyedWrite write) {
        Fingerprint now = write.fingerprint();
        List<String> fields = new ArrayList<>();
        if (!record.operation().equals(now.operation())) {
            fields.add("operation");
        }
        if (!record.target().equals(now.target())) {
            fields.add("target");
        }
        fields.addAll(CanonicalJson.differingFields(record.requestBody(), now.canonicalRequest()));
        return fields;
    }

    /**
     * One line per answered request: operation, target, key and status; never a token or a body. A
     * refusal is written at INFO; a success at DEBUG, off by default, where it costs one level check:
     * the stored records and the metrics account for every answer, and a line per payment was a
     * measurable share of its CPU.
     */
    private static void log(KeyedWrite write, Answer answer) {
        Logger.Level level = answer.status() >= 400 ? Logger.Level.INFO : Logger.Level.DEBUG;
        if (LOG.isEnabled(level)) {
            LOG.logf(level, "%s %s key %s: %d%s", write.operation().tag(), write.fingerprint().target(), write.key().value(),
                    answer.status(), answer.repeat() ? " (repeat)" : "");
        }
    }

    private static boolean isRecorded(Throwable failure) {
        return failure instanceof ApiException api && api.code().kind() == ErrorCode.Kind.RECORDED;
    }

    /**
     * A row read beside its write's record, with what that record answers: its finished answer, or
     * the refusal of a key reused for another request; neither while the write has not finished.
     * Either is an answer, timed as one; a refusal of the read's own is none.
     */
    private record Looked<T>(T row, Answer answer, ApiException refusal) {

        static <T> Looked<T> of(WithRecord<T> found, KeyedWrite write) {
            try {
                return new Looked<>(found.row(), finishedAnswer(found.record(), write), null);
            } catch (ApiException reused) {
                return new Looked<>(found.row(), null, reused);
            }
        }

        boolean answered() {
            return answer != null || refusal != null;
        }

        Uni<Answer> reply() {
            return refusal != null ? Uni.createFrom().failure(refusal) : Uni.createFrom().item(answer);
        }
    }

    /** A recorded refusal on its way out of the transaction it rolls back. */
    private static final class Refused extends RuntimeException {

        private final ApiException problem;

        Refused(ApiException problem) {
            super(problem.getMessage(), problem, false, false);
            this.problem = problem;
        }

        ApiException problem() {
            return problem;
        }
    }
}
