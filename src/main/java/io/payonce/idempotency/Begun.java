package io.payonce.idempotency;

/**
 * How a write that goes on after its first transaction began ({@link IdempotencyGuard#begin}): it
 * was answered at once, it started now, or its key was claimed by an earlier request whose write is
 * still open and is to be resumed, not started again.
 */
public sealed interface Begun<T> {

    static <T> Begun<T> answered(Answer answer) {
        return new Answered<>(answer);
    }

    static <T> Begun<T> started(T work) {
        return new Started<>(work);
    }

    /** A repeat, a recorded refusal, or a replay of the key's stored answer. */
    record Answered<T>(Answer answer) implements Begun<T> {
    }

    /** The key was claimed by this request and stays open until the write is settled. */
    record Started<T>(T work) implements Begun<T> {
    }

    /**
     * An earlier request with the same key and the same body began the write, which is not
     * settled yet. {@code soFar} is the answer it has for now (a 202), or null while it has none.
     */
    record Open<T>(Answer soFar) implements Begun<T> {
    }
}
