package io.payonce.commands.outcome;

/**
 * An ack or a nack that failed: the broker could not be told what became of a message; the channel's
 * recovery redelivers it. A row of {@link OutcomeTable} of its own (UNSETTLED), since nothing more
 * can be decided about the message.
 */
public final class AckLost extends RuntimeException {

    public AckLost(Throwable cause) {
        super("ack or nack failed", cause, false, false);
    }
}
