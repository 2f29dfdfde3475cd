package io.payonce.commands.outcome;

/**
 * The rules that send a command back to the queue once and no more ({@link Outcome#REQUEUE_ONCE}):
 * each finds out whether it did so before from its own mark ({@code RequeueMarks}), never from the
 * broker's redelivered flag, which payonce's other requeues (a store down, an instance stopping) and
 * a lost connection set too. A command sent back once because Redis blinked still has its one
 * requeue for a "come back later".
 */
public enum OnceRule {
    /** Told to come back later, with no reply-to to tell its sender that nothing was done: then dead-lettered. */
    COME_BACK_LATER,
    /** A failure nothing in the table foresaw: then dead-lettered. */
    UNFORESEEN,
    /** Settling the message failed in a way the table has no row for: then rejected to the dead letters. */
    LAST_RESORT,
    /** The answer is stored, but its reply was not confirmed: then acked, the sender asking again. */
    UNREPLIED
}
