package io.payonce.idempotency;

/**
 * One request under an Idempotency-Key: whose key it is, what it asks for, and the path that a
 * recorded problem names as its instance.
 */
public record IdempotentCommand(String scope, IdempotencyKey key, Fingerprint fingerprint, String instance) {

    public String operation() {
        return fingerprint.operation();
    }
}
