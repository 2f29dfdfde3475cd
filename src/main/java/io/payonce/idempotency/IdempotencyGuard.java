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
import java.util.function.Supplier;

/**
 * Runs a write under its key, in one transaction with the money it moves: claim the key, do the
 * work, store the answer, commit. A repeat finds the claim and replays the stored answer; a crash
 * before COMMIT rolls back the claim with the work, so no half-done write and no stuck claim can
 * survive. Its doors: {@link #read} a request's key at the edge, {@link #run} a command, and
 * {@link #storedAnswerOr} or {@link #replay} a finished one.
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

    IdempotencyGuard(Pool pool, Transactions transactions, IdempotencyRepository records, ObjectMapper json, AnswerMeter meter,
                     PayonceMetrics metrics, Detached detached) {
        this.pool = pool;
        this.transactions = transactions;
        this.records = records;
        this.json = json;
        this.meter = meter;
        this.metrics = metrics;
        this.detached = detached;
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
     * Runs {@code work} once per key, and answers every repeat with the first answer. It runs to the
     * end of its transaction even if the client goes away, so the answer is always stored and logged.
     */
    public Uni<Answer> run(KeyedWrite command, Function<SqlConnection, Uni<Answer>> work) {
        Uni<Answer> answered = transactions.inTransaction(tx -> claimOrReplay(tx, command, work))
                .onFailure(Refused.class).recoverWithUni(refused -> recordRefusal(command, ((Refused) refused).problem()));
        return detached.toTheEnd(meter.counted(command.operation(),
                metrics.timed(command.operation().tag(), answered).invoke(answer -> log(command, answer))));
    }

    /**
     * Answers with the stored answer when the command has completed, and goes on with
     * {@code whenNone} while it has not. {@code read} brings the row the request needs and, in the
     * same statement, the command's record ({@link RecordJoin}), so that a repeat is answered from one
     * read, before it takes a lock or opens a transaction. A refusal of {@code read}'s own (an order
     * the caller may not pay) comes before anything the key holds is looked at.
     */
    public <T> Uni<Answer> storedAnswerOr(KeyedWrite command, Uni<WithRecord<T>> read, Function<T, Uni<Answer>> whenNone) {
        WriteOperation operation = command.operation();
        return metrics.timedIfAnswered(operation.tag(), read.map(found -> Replay.of(found, command)), Replay::answered)
                .flatMap(found -> found.answered() ? meter.counted(operation, found.reply()) : whenNone.apply(found.row()));
    }

    /**
     * The stored answer of a command that has completed; while none is stored, {@code whenNone}. Lets
     * a repeat that cannot run now (its twin holds the pay lock, Redis cannot vouch for its token)
     * still get its answer from the database.
     */
    public Uni<Answer> replay(KeyedWrite command, Supplier<Throwable> whenNone) {
        return meter.counted(command.operation(), finished(command).onItem().ifNull().failWith(whenNone));
    }

    /** The command's stored answer, replayed, or null while it has none; uncounted, for a caller that counts its own answer. */
    public Uni<Answer> finished(KeyedWrite command) {
        return records.find(pool, command).map(record -> finishedAnswer(record, command));
    }

    /** The answer {@code record} holds for {@code command}, or null while it holds none. */
    private static Answer finishedAnswer(IdempotencyRecord record, KeyedWrite command) {
        if (record == null || !record.done()) {
            return null;
        }
        Answer answer = replayOf(record, command);
        log(command, answer);
        return answer;
    }

    private Uni<Answer> claimOrReplay(SqlConnection tx, KeyedWrite command, Function<SqlConnection, Uni<Answer>> work) {
        return claimed(records.claim(tx, command))
                .flatMap(claimed -> claimed ? execute(tx, command, work) : replayInTransaction(tx, command));
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
    private Uni<Answer> execute(SqlConnection tx, KeyedWrite command, Function<SqlConnection, Uni<Answer>> work) {
        return refusalsRecorded(tx, work).flatMap(answer -> store(tx, command, answer));
    }

    private static <T> Uni<T> refusalsRecorded(SqlConnection tx, Function<SqlConnection, Uni<T>> work) {
        return Uni.createFrom().deferred(() -> work.apply(tx))
                .onFailure(IdempotencyGuard::isRecorded).transform(failure -> new Refused((ApiException) failure));
    }

    /**
     * Begins a write that goes on after its first transaction, such as a card payment that waits
     * for its processor: claims the key and runs {@code work} in one transaction. Work that ends
     * there (a repeat, a recorded refusal) has its answer stored as {@link #run} stores it; work that
     * goes on leaves the claim open (PROCESSING) for {@link #settle} to complete, on whichever
     * instance learns the outcome. A key that an earlier request claimed that way, for the same
     * request, comes back {@link Begun.Open}: the caller resumes the write instead of starting it again.
     */
    public <T> Uni<Begun<T>> begin(KeyedWrite command, Function<SqlConnection, Uni<Begun<T>>> work) {
        Uni<Begun<T>> begun = transactions.<Begun<T>>inTransaction(tx -> claimed(records.claim(tx, command)).flatMap(claimed -> claimed
                        ? startClaimed(tx, command, work)
                        : records.find(tx, command).map(record -> IdempotencyGuard.<T>openOrReplayed(record, command))))
                .onFailure(Refused.class).recoverWithUni(refused -> recordRefusal(command, ((Refused) refused).problem()).map(Begun::<T>answered));
        return detached.toTheEnd(begun);
    }

    /** Runs the work of a key just claimed; an answer it ends with is stored, a write it starts leaves the claim open. */
    private <T> Uni<Begun<T>> startClaimed(SqlConnection tx, KeyedWrite command, Function<SqlConnection, Uni<Begun<T>>> work) {
        return refusalsRecorded(tx, work).flatMap(started -> started instanceof Begun.Answered<T> answered
                ? store(tx, command, answered.answer()).map(Begun::<T>answered)
                : Uni.createFrom().item(started));
    }

    private static <T> Begun<T> openOrReplayed(IdempotencyRecord record, KeyedWrite command) {
        if (record == null) {
            throw new ApiException(ErrorCode.IDEMPOTENCY_KEY_IN_USE);
        }
        if (record.done()) {
            return Begun.answered(replayOf(record, command));
        }
        requireSameRequest(record, command);
        return new Begun.Open<>(record.httpStatus() == null ? null : replayOf(record, command));
    }

    /**
     * Completes a begun write with its final answer, in the caller's transaction, from whichever
     * instance settles it; the key replays this answer from then on.
     */
    public Uni<Answer> settle(SqlClient tx, String scope, IdempotencyKey key, Answer answer) {
        return written(answer, body -> records.complete(tx, scope, key, answer.status(), body, answer.location()));
    }

    /**
     * Stores the answer a begun write has for now (its outcome is not known yet), leaving the claim
     * open: a retry with the key resumes the write, and is answered this while it cannot settle it.
     */
    public Uni<Answer> answerForNow(SqlClient tx, String scope, IdempotencyKey key, Answer answer) {
        return written(answer, body -> records.answerForNow(tx, scope, key, answer.status(), body, answer.location()));
    }

    /** The answer stored under a key, final or for now, or null when there is none. */
    public Uni<Answer> storedAnswer(SqlClient client, String scope, IdempotencyKey key) {
        return records.find(client, scope, key).map(record -> record == null || record.httpStatus() == null ? null
                : new Answer(record.httpStatus(), record.responseBody(), record.responseLocation(), null));
    }

    /**
     * Stores a refusal as the key's answer, in a short transaction of its own that claims the key
     * already answered. A twin that claimed the key in the moment between the two transactions has
     * the key's answer, and this request replays it: whichever is stored first is the answer of all.
     */
    private Uni<Answer> recordRefusal(KeyedWrite command, ApiException refusal) {
        Answer answer = Answer.problem(refusal, command.instance());
        String body = answer.bodyJson(json);
        return transactions.inTransaction(tx -> claimed(records.claimAnswered(tx, command, answer.status(), body))
                .flatMap(claimed -> claimed ? Uni.createFrom().item(answer.withJson(body)) : replayInTransaction(tx, command)));
    }

    private Uni<Answer> store(SqlClient tx, KeyedWrite command, Answer answer) {
        return settle(tx, command.scope(), command.key(), answer);
    }

    /** Stores the answer as JSON text and answers with that very text, so that the first answer and every replay are one. */
    private Uni<Answer> written(Answer answer, Function<String, Uni<Void>> write) {
        String body = answer.bodyJson(json);
        return write.apply(body).replaceWith(answer.withJson(body));
    }

    /** A key held by another request is a 422 at once, even while that request is still open; the same request's answer replays. */
    private Uni<Answer> replayInTransaction(SqlConnection tx, KeyedWrite command) {
        return records.find(tx, command).map(record -> {
            if (record == null) {
                throw new ApiException(ErrorCode.IDEMPOTENCY_KEY_IN_USE);
            }
            requireSameRequest(record, command);
            if (!record.done()) {
                throw new ApiException(ErrorCode.IDEMPOTENCY_KEY_IN_USE);
            }
            return replayOf(record, command);
        });
    }

    private static Answer replayOf(IdempotencyRecord record, KeyedWrite command) {
        requireSameRequest(record, command);
        return new Answer(record.httpStatus(), record.responseBody(), record.responseLocation(), command.request().keyDefence());
    }

    /** A key reused for another request is a 422, whatever its record holds. */
    private static void requireSameRequest(IdempotencyRecord record, KeyedWrite command) {
        if (!record.fingerprint().equals(command.fingerprint().sha256())) {
            throw new ApiException(ErrorCode.IDEMPOTENCY_KEY_REUSED, String.join(", ", differences(record, command)));
        }
    }

    private static List<String> differences(IdempotencyRecord record, KeyedWrite command) {
        Fingerprint now = command.fingerprint();
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
    private static void log(KeyedWrite command, Answer answer) {
        Logger.Level level = answer.status() >= 400 ? Logger.Level.INFO : Logger.Level.DEBUG;
        if (LOG.isEnabled(level)) {
            LOG.logf(level, "%s %s key %s: %d%s", command.operation().tag(), command.fingerprint().target(), command.key().value(),
                    answer.status(), answer.repeat() ? " (repeat)" : "");
        }
    }

    private static boolean isRecorded(Throwable failure) {
        return failure instanceof ApiException api && api.code().kind() == ErrorCode.Kind.RECORDED;
    }

    /**
     * A row read beside its command's record, with what that record answers: its stored answer, or
     * the refusal of a key reused for another request; neither while the command has not completed.
     */
    private record Replay<T>(T row, Answer answer, ApiException refusal) {

        static <T> Replay<T> of(WithRecord<T> found, KeyedWrite command) {
            try {
                return new Replay<>(found.row(), finishedAnswer(found.record(), command), null);
            } catch (ApiException reused) {
                return new Replay<>(found.row(), null, reused);
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
