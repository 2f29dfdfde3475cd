package io.payonce.idempotency;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.function.Function;

/**
 * What a key answers, read and written inside a caller's own transaction, for the writes the guard
 * ({@link IdempotencyGuard}) does not wrap whole: a begun write settled, or answered for now, on
 * whichever instance learns its outcome; what a key answers now; and the claim and answer of a body
 * sent pipelined, which sends its own statements. Nothing here counts, times or logs an answer: the
 * guard's door that began the write does, once.
 */
@ApplicationScoped
public class KeyAnswers {

    private final IdempotencyRepository records;
    private final ObjectMapper json;

    KeyAnswers(IdempotencyRepository records, ObjectMapper json) {
        this.records = records;
        this.json = json;
    }

    /**
     * The claim as one statement, for a body sent pipelined: a twin's claim (1062) fails it, and the
     * body, reading every reply before COMMIT, rolls back.
     */
    public Uni<Boolean> claim(SqlClient tx, KeyedWrite write) {
        return records.claim(tx, write).replaceWith(Boolean.TRUE);
    }

    /**
     * Stores the answer under the key this transaction claimed, for a body sent pipelined; null when
     * no open claim of the key was there to complete, so that the body rolls back rather than
     * commit a write without its answer.
     */
    public Uni<Answer> storeClaimed(SqlClient tx, KeyedWrite write, Answer answer) {
        String body = answer.bodyJson(json);
        return records.completeOpen(tx, write.scope(), write.key(), answer.status(), body, answer.location())
                .map(completed -> completed ? answer.withJson(body) : null);
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

    /**
     * What a key answers now: the final answer stored under it, or the answer a begun write has for
     * now, as stored; null while it has none. Read through {@code client}, so that in a transaction it
     * sees what that transaction sees.
     */
    public Uni<Answer> storedAnswer(SqlClient client, String scope, IdempotencyKey key) {
        return records.find(client, scope, key).map(record -> IdempotencyRecord.answerOf(record, null));
    }

    /** Stores the answer as JSON text and answers with that very text, so that the first answer and every replay are one. */
    private Uni<Answer> written(Answer answer, Function<String, Uni<Void>> write) {
        String body = answer.bodyJson(json);
        return write.apply(body).replaceWith(answer.withJson(body));
    }
}
