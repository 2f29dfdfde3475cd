package io.payonce.idempotency;

import io.payonce.metrics.RepeatDefence;
import io.payonce.tracing.RequestTags;

/**
 * A write as it arrives: which operation, on what, under which key, and the path a recorded problem
 * names as its instance. It is read once, at the edge ({@link IdempotencyGuard#read}); the service
 * that runs it adds who is asking and what was asked ({@link #by}).
 *
 * @param keyDefence the defence a repeat of this key counts as: the Idempotency-Key, or the submit
 *                   token whose digest stands in for one
 */
public record KeyedRequest(WriteOperation operation, String target, IdempotencyKey key, String instance, RepeatDefence keyDefence) {

    /** Names this request on its span and in the log lines written while it is handled. */
    public KeyedRequest tagged() {
        RequestTags.keyed(operation.tag(), target, key.value());
        return this;
    }

    /** The keyed write this request asks for: scope is the caller, {@code body} the parsed request, if any. */
    public KeyedWrite by(String scope, Object body) {
        return new KeyedWrite(scope, this, Fingerprint.of(operation.tag(), target, CanonicalJson.of(body)));
    }

    /** The same request, its key carried as a message id: a repeat counts as caught by {@code defence}. */
    public KeyedRequest caughtAs(RepeatDefence defence) {
        return new KeyedRequest(operation, target, key, instance, defence);
    }

    /**
     * A submission under a one-time token: the token's digest is its key, so that records and log
     * lines never hold a token.
     */
    public static KeyedRequest ofSubmitToken(WriteOperation operation, Object targetId, String submitToken, String instance) {
        IdempotencyKey key = new IdempotencyKey(Fingerprint.of("submit-token", "", submitToken).sha256());
        return new KeyedRequest(operation, operation.target(targetId), key, instance, RepeatDefence.SUBMIT_TOKEN);
    }
}
