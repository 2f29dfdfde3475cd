package io.payonce.idempotency;

import io.payonce.metrics.RepeatDefence;

/** A claimed key: what it was used for and, once DONE, the answer it replays. */
public record IdempotencyRecord(
        String operation,
        String target,
        String fingerprint,
        String requestBody,
        boolean done,
        Integer httpStatus,
        String responseBody,
        String responseLocation) {

    /**
     * The one way a record becomes an answer: the status, body and Location stored in it, given to a
     * repeat that {@code caughtBy} recognised (null: given as stored); null while it stores none.
     */
    static Answer answerOf(IdempotencyRecord record, RepeatDefence caughtBy) {
        if (record == null || record.httpStatus() == null) {
            return null;
        }
        return new Answer(record.httpStatus(), record.responseBody(), record.responseLocation(), caughtBy);
    }
}
