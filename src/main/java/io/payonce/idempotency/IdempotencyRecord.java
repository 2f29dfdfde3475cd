package io.payonce.idempotency;

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
}
