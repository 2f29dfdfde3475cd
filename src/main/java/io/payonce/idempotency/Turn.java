package io.payonce.idempotency;

import io.smallrye.mutiny.Uni;

import java.util.Objects;
import java.util.function.Supplier;

/**
 * Whether a keyed write may run now, as something outside the database says before its transaction:
 * the pay lock, a submit token. A write whose turn is taken runs, and gives the turn back once its
 * transaction has ended, even if its client has gone by then. A write refused its turn is a repeat
 * that cannot run now ({@link IdempotencyGuard#run(KeyedWrite, Uni, java.util.function.Function)}):
 * it is answered its key's stored answer, or, while the key has none, the turn's refusal.
 */
public final class Turn {

    /** A turn with nothing to give back. */
    public static final Turn TAKEN = taken(() -> Uni.createFrom().voidItem());

    private final Supplier<Uni<Void>> giveBack;
    private final Supplier<? extends Throwable> refusal;

    private Turn(Supplier<Uni<Void>> giveBack, Supplier<? extends Throwable> refusal) {
        this.giveBack = giveBack;
        this.refusal = refusal;
    }

    /** The write may run; {@code giveBack} releases what it holds, once its transaction has ended. */
    public static Turn taken(Supplier<Uni<Void>> giveBack) {
        return new Turn(Objects.requireNonNull(giveBack), null);
    }

    /** The write may not run now; {@code refusal} is its answer while its key has none stored. */
    public static Turn refused(Supplier<? extends Throwable> refusal) {
        return new Turn(null, Objects.requireNonNull(refusal));
    }

    boolean isTaken() {
        return refusal == null;
    }

    Uni<Void> giveBack() {
        return giveBack.get();
    }

    Supplier<? extends Throwable> refusal() {
        return refusal;
    }
}
