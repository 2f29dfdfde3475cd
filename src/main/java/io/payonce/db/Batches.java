package io.payonce.db;

import io.smallrye.mutiny.Uni;

import java.util.function.Supplier;

/** Housekeeping in short statements: repeat a bounded batch until one comes back short. */
public final class Batches {

    private Batches() {
    }

    /** Runs {@code batch} (which returns the rows it touched) until it touches fewer than {@code batchSize}; returns the total. */
    public static Uni<Integer> untilShort(Supplier<Uni<Integer>> batch, int batchSize) {
        return untilShort(batch, batchSize, 0);
    }

    private static Uni<Integer> untilShort(Supplier<Uni<Integer>> batch, int batchSize, int doneSoFar) {
        return batch.get().flatMap(count -> count < batchSize
                ? Uni.createFrom().item(doneSoFar + count)
                : untilShort(batch, batchSize, doneSoFar + count));
    }
}
