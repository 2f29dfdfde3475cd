package io.payonce.commands.settlement;

import io.payonce.commands.outcome.OnceRule;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;

/**
 * Whether a {@link OnceRule} meets a command for the first time: the mark it leaves is the command's,
 * whichever instance takes it next and however the broker flags it.
 */
public interface RequeueMarks {

    /** What the rule's mark says of this meeting. */
    enum Meeting {
        /** The rule had not sent the command back; now it has its mark. */
        FIRST,
        /** The rule sent the command back before. */
        AGAIN,
        /** No mark could be read or left now (the store down or slow): the rule is not used up, and the command waits as for a store. */
        UNKNOWN
    }

    /**
     * This meeting of {@code rule} with the command in {@code amqp}. Never a failure: a command that
     * names no sender or message-id has no mark, and the broker's redelivered flag is the bound, as a
     * bound there must be.
     */
    Uni<Meeting> meet(IncomingRabbitMQMetadata amqp, OnceRule rule);
}
