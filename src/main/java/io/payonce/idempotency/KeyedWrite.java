package io.payonce.idempotency;

/**
 * One write under a key, as the guard runs it: whose key it is (the scope), the request as it
 * arrived, and what it asks for, as the fingerprint the key is bound to. A repeat is the same key
 * in the same scope; a key sent again with another fingerprint is another request, refused.
 */
public record KeyedWrite(String scope, KeyedRequest request, Fingerprint fingerprint) {

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
