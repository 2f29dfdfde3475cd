package io.payonce.idempotency;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.payonce.api.Answer;
import io.payonce.api.ApiException;
import io.payonce.api.DuplicateKey;
import io.payonce.api.ErrorCode;
import io.payonce.api.LockWaitTimeout;
import io.payonce.api.Problem;
import io.payonce.db.Transactions;
import io.payonce.metrics.DuplicateLayer;
import io.payonce.metrics.Outcome;
import io.payonce.metrics.PayonceMetrics;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Runs an operation under an Idempotency-Key, in one transaction with the money it moves:
 * claim the key, do the work, store the answer, commit. A repeat finds the claim and replays the
 * stored answer; a crash before COMMIT rolls back the claim with the work, so no half-done
 * operation and no stuck claim can survive.
 */
@ApplicationScoped
public class IdempotencyGuard {

    private static final Logger LOG = Logger.getLogger(IdempotencyGuard.class);
    private static final String SAVEPOINT = "SAVEPOINT before_work";
    private static final String ROLLBACK_TO_SAVEPOINT = "ROLLBACK TO SAVEPOINT before_work";

    private final Pool pool;
    private final Transactions transactions;
    private final IdempotencyRepository records;
    private final CanonicalJson canonicalJson;
    private final ObjectMapper json;
    private final PayonceMetrics metrics;

    public IdempotencyGuard(Pool pool, Transactions transactions, IdempotencyRepository records, CanonicalJson canonicalJson,
                            ObjectMapper json, PayonceMetrics metrics) {
        this.pool = pool;
        this.transactions = transactions;
        this.records = records;
        this.canonicalJson = canonicalJson;
        this.json = json;
        this.metrics = metrics;
    }

    /** The command for a request: scope is the caller, target the resource the request acts on. */
    public IdempotentCommand command(String scope, IdempotencyKey key, String operation, String target,
                                     Object request, String instance) {
        return new IdempotentCommand(scope, key, Fingerprint.of(operation, target, canonicalJson.of(request)), instance);
    }

    /** The request's key, or a 400 counted as rejected when it is missing or malformed. */
    public IdempotencyKey requiredKey(String operation, String header) {
        try {
            return IdempotencyKey.required(header);
        } catch (ApiException invalidKey) {
            metrics.outcome(operation, Outcome.REJECTED);
            throw invalidKey;
        }
    }

    /** Runs to the end of the transaction even if the client goes away, so the answer is always logged. */
    public Uni<Answer> run(IdempotentCommand command, Function<SqlConnection, Uni<Result>> work) {
        return Detached.toTheEnd(metrics.timed(command.operation(), transactions.inTransaction(tx -> claimOrReplay(tx, command, work)))
                .invoke(answer -> {
                    if (!answer.replayed()) {
                        metrics.outcome(command.operation(), Outcome.EXECUTED);
                    }
                    log(command, answer);
                }));
    }

    private Uni<Answer> claimOrReplay(SqlConnection tx, IdempotentCommand command, Function<SqlConnection, Uni<Result>> work) {
        return records.claim(tx, command)
                .replaceWith(true)
                .onFailure(DuplicateKey::is).recoverWithItem(false)
                .onFailure(LockWaitTimeout::is).transform(e -> inUse(command))
                .flatMap(claimed -> claimed ? execute(tx, command, work) : replay(tx, command));
    }

    /**
     * The work runs after a savepoint: a recorded business failure (402, 404, 409) undoes the work's
     * writes but keeps the claim, and its problem becomes the stored answer.
     */
    private Uni<Answer> execute(SqlConnection tx, IdempotentCommand command, Function<SqlConnection, Uni<Result>> work) {
        return tx.query(SAVEPOINT).execute()
                .flatMap(ignored -> work.apply(tx))
                .onFailure(IdempotencyGuard::isRecorded).recoverWithUni(failure -> tx.query(ROLLBACK_TO_SAVEPOINT).execute()
                        .replaceWith(problemResult((ApiException) failure, command)))
                .flatMap(result -> store(tx, command, result));
    }

    private Uni<Answer> store(SqlConnection tx, IdempotentCommand command, Result result) {
        String body = toJson(result.body());
        return records.complete(tx, command, result.status(), body, result.location())
                .replaceWith(new Answer(result.status(), body, result.location(), false));
    }

    /**
     * The stored answer for a key whose request has completed, or null while none is stored. Lets a
     * repeat that arrives while a twin holds the pay lock replay instead of being told to wait.
     */
    public Uni<Answer> storedAnswer(IdempotentCommand command) {
        return records.find(pool, command).map(record -> {
            if (record == null || !record.done()) {
                return null;
            }
            Answer answer = replayOf(record, command);
            log(command, answer);
            return answer;
        });
    }

    private Uni<Answer> replay(SqlConnection tx, IdempotentCommand command) {
        return records.find(tx, command).map(record -> {
            if (record == null || !record.done()) {
                throw inUse(command);
            }
            return replayOf(record, command);
        });
    }

    private Answer replayOf(IdempotencyRecord record, IdempotentCommand command) {
        if (!record.fingerprint().equals(command.fingerprint().sha256())) {
            metrics.outcome(command.operation(), Outcome.MISMATCH);
            throw new ApiException(ErrorCode.IDEMPOTENCY_KEY_REUSED, String.join(", ", differences(record, command)));
        }
        metrics.duplicateCaught(command.operation(), DuplicateLayer.IDEMPOTENCY_KEY);
        metrics.outcome(command.operation(), Outcome.REPLAYED);
        return new Answer(record.httpStatus(), record.responseBody(), record.responseLocation(), true);
    }

    private List<String> differences(IdempotencyRecord record, IdempotentCommand command) {
        Fingerprint now = command.fingerprint();
        List<String> fields = new ArrayList<>();
        if (!record.operation().equals(now.operation())) {
            fields.add("operation");
        }
        if (!record.target().equals(now.target())) {
            fields.add("target");
        }
        fields.addAll(canonicalJson.differingFields(record.requestBody(), now.canonicalRequest()));
        return fields;
    }

    /** One line per answered request: operation, target, key and outcome; never a token or a body. */
    private static void log(IdempotentCommand command, Answer answer) {
        LOG.infof("%s %s key %s: %d%s", command.operation(), command.fingerprint().target(), command.key().value(),
                answer.status(), answer.replayed() ? " (replayed)" : "");
    }

    private ApiException inUse(IdempotentCommand command) {
        metrics.outcome(command.operation(), Outcome.CONFLICT);
        metrics.duplicateCaught(command.operation(), DuplicateLayer.IDEMPOTENCY_KEY);
        return new ApiException(ErrorCode.IDEMPOTENCY_KEY_IN_USE);
    }

    private static Result problemResult(ApiException failure, IdempotentCommand command) {
        return new Result(failure.code().status(), Problem.of(failure, command.instance()), null);
    }

    private static boolean isRecorded(Throwable failure) {
        return failure instanceof ApiException api && api.code().recorded();
    }

    private String toJson(Object body) {
        try {
            return json.writeValueAsString(body);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("Answers are plain records and always serialize", e);
        }
    }
}
