package io.payonce.idempotency;

/**
 * One request under a key: whose key it is, the request as it arrived, and what it asks for, as
 * the fingerprint the key is bound to.
 */
public record IdempotentCommand(String scope, KeyedRequest request, Fingerprint fingerprint) {

    public WriteOperation operation() {
        return request.operation();
    }

    public IdempotencyKey key() {
        return request.key();
    }

    public String instance() {
        return request.instance();
    }
}
