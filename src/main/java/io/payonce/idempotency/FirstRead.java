package io.payonce.idempotency;

/**
 * What a keyed write's first read found ({@link IdempotencyGuard#firstRead}): the answer stored
 * under its key, when the write has finished, or else the row the write goes on with. Its caller
 * answers with the one or proceeds with the other itself.
 */
public record FirstRead<T>(Answer stored, T row) {

    static <T> FirstRead<T> answered(Answer stored) {
        return new FirstRead<>(stored, null);
    }

    static <T> FirstRead<T> unanswered(T row) {
        return new FirstRead<>(null, row);
    }

    /** Whether the key has answered: the write is over, and {@link #stored} is the repeat's answer. */
    public boolean answered() {
        return stored != null;
    }
}
