package io.payonce.commands.outcome;

/** What becomes of a message, by what its command came to: each row's verdict in {@link OutcomeTable}, which the settlement carries out. */
public enum Outcome {
    REPLY, UNSETTLED, REQUEUE, REQUEUE_NOW, DEAD_LETTER,
    /** Back to the queue after the pause if its {@link OnceRule} has not sent it back before; dead-lettered if it has. */
    REQUEUE_ONCE
}
