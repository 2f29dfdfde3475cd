package io.payonce.idempotency;

/**
 * One request under an Idempotency-Key: whose key it is, what it asks for, and the path that a
 * recorded problem names as its instance.
 */
public record IdempotentCommand(String scope, IdempotencyKey key, Fingerprint fingerprint, String instance) {

    public String operation() {
        return fingerprint.operation();
    }

    /**
     * A 64-character reference unique to this caller's key, for ledger lines that have no row of
     * their own to point at: UNIQUE(ref_type, ref_id) then refuses a second effect of the same key
     * even after its idempotency record has expired.
     */
    public String reference() {
        return Fingerprint.of("reference", scope, key.value()).sha256();
    }
}
