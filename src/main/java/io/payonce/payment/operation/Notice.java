package io.payonce.payment.operation;

import io.payonce.processor.ProcessorReport;
import io.smallrye.mutiny.Uni;

import java.util.function.Supplier;

/**
 * What a definite outcome that payonce learns from outside its own calls (a processor's webhook
 * event) did to the operation made under its key: {@code id} and {@code phase} (where the operation
 * stands now, in its kind's stored words) are null when no operation of the kind was made under it.
 */
public record Notice(Long id, String phase, Effect effect) {

    public enum Effect {
        /** It settled the operation, which had no outcome yet. */
        APPLIED,
        /** The operation had that outcome already: nothing changed. */
        ALREADY_SETTLED,
        /**
         * It says otherwise than the operation's recorded outcome, or is not this operation's
         * ({@link Operation#isDescribedBy}), or names a processor id another operation recorded: nothing changed.
         */
        CONTRADICTING,
        /** No operation of the kind was made under its key: nothing was created. */
        UNKNOWN
    }

    /**
     * What {@code said} does to {@code operation}, found by the key it was made under and locked until
     * the caller's transaction ends (null: none was): one that has an outcome keeps it; one it does not
     * describe is not moved either, since the notice holds no lease on it (the worker or the recovery
     * job whose own lookup meets the same outcome leaves it UNKNOWN); otherwise {@code record}
     * settles it, as a lookup's answer would, and must move it, since nothing else can under its locks.
     * Never a failure the processor would deliver again for days: a processor id another operation
     * recorded contradicts.
     */
    public static <O extends Operation<O>> Uni<Notice> of(O operation, ProcessorReport said, Supplier<Uni<?>> record) {
        if (operation == null) {
            return Uni.createFrom().item(new Notice(null, null, Effect.UNKNOWN));
        }
        Phase now = operation.lifecyclePhase();
        if (now.definite()) {
            return standing(operation, operation.isSettledAs(said) ? Effect.ALREADY_SETTLED : Effect.CONTRADICTING);
        }
        if (!operation.isDescribedBy(said)) {
            return standing(operation, Effect.CONTRADICTING);
        }
        Phase next = said.succeeded() ? Phase.SUCCEEDED : Phase.FAILED;
        return record.get().map(answer -> {
            if (answer == null) {
                throw new IllegalStateException("Operation " + operation.id() + " was unsettled under its locks, yet its phase did not move");
            }
            return new Notice(operation.id(), operation.phaseNamed(next), Effect.APPLIED);
        }).onFailure(ProcessorIdTaken.class).recoverWithUni(taken -> standing(operation, Effect.CONTRADICTING));
    }

    private static Uni<Notice> standing(Operation<?> operation, Effect effect) {
        return Uni.createFrom().item(new Notice(operation.id(), operation.phaseNamed(operation.lifecyclePhase()), effect));
    }
}
