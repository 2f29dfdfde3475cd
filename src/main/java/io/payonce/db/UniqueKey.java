package io.payonce.db;

import io.smallrye.mutiny.Uni;

import java.util.function.Supplier;

/**
 * Every write that must happen once rests on a unique key: the second INSERT is refused with a
 * duplicate entry, and what to do then (answer with the row that holds the key, or refuse) is the
 * caller's one decision.
 */
public final class UniqueKey {

    private UniqueKey() {
    }

    /** {@code insert}, or, when a unique key refuses it, {@code whenTaken}. */
    public static <T> Uni<T> insertOr(Uni<T> insert, Supplier<Uni<? extends T>> whenTaken) {
        return insert.onFailure(SqlErrors::isDuplicateKey).recoverWithUni(whenTaken);
    }
}
