package io.payonce.commands.outcome;

/** What becomes of a message, by what its command came to: each row's verdict in {@link OutcomeTable}, which the settlement carries out. */
public enum Outcome {
    REPLY, UNSETTLED, REQUEUE, REQUEUE_NOW, DEAD_LETTER
}
