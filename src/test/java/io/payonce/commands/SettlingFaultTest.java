package io.payonce.commands;

import io.payonce.commands.outcome.OnceRule;
import io.payonce.idempotency.Answer;
import io.smallrye.mutiny.Uni;
import io.smallrye.reactive.messaging.rabbitmq.IncomingRabbitMQMetadata;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A reply that cannot even be built (its body does not serialize, a fault of payonce's own), or a
 * settling that fails in a way the consumer's table has no row for, still settles its message: back
 * to the queue, never left unacked on an open channel, where the broker would hold it, and a place
 * in the consumer's prefetch with it, until the channel closed. No store is needed: nothing here
 * gets as far as the broker.
 */
class SettlingFaultTest {

    private static final Duration WAIT = Duration.ofSeconds(5);

    private final SettledMessages messages = new SettledMessages();

    @Test
    void anAnswerWhoseReplyCannotBeBuiltGoesBackToTheQueue() throws Exception {
        IncomingRabbitMQMetadata amqp = SettledMessages.delivered(false, "guest.replies");

        messages.consumer.handle(messages.recorded(amqp), amqp, Uni.createFrom().item(Answer.created(new Object()))).await().atMost(WAIT);

        assertEquals(List.of("requeued"), messages.settled);
    }

    /**
     * Met a second time, the failed reply is dead-lettered; the copy fails too (no publisher here): the
     * message is rejected to the queue's own dead-letter exchange, not sent round again.
     */
    @Test
    void aSecondFailureWhoseDeadLetterCopyFailsIsRejectedNotSentRoundAgain() throws Exception {
        IncomingRabbitMQMetadata amqp = SettledMessages.delivered(true, "guest.replies");

        for (int delivery = 0; delivery < 2; delivery++) {
            messages.consumer.handle(messages.recorded(amqp), amqp, Uni.createFrom().item(Answer.created(new Object()))).await().atMost(WAIT);
        }

        assertEquals(List.of("requeued", "rejected"), messages.settled);
    }

    /**
     * Settling fails in a way no row of the table names (a fault in the unforeseen rule's own marks):
     * the last resort sends the message back to the queue once, by its own mark, and rejects it to the
     * queue's dead-letter exchange when it fails so again, never leaving it unsettled or round for ever.
     */
    @Test
    void aMessageWhoseSettlingFailsOutsideTheTableGoesBackOnceThenIsRejected() throws Exception {
        SettledMessages faulty = new SettledMessages(Set.of(OnceRule.UNFORESEEN));
        IncomingRabbitMQMetadata amqp = SettledMessages.delivered(false, "guest.replies");

        for (int delivery = 0; delivery < 3; delivery++) {
            faulty.consumer.handle(faulty.recorded(amqp), amqp, Uni.createFrom().item(Answer.created(new Object()))).await().atMost(WAIT);
        }

        assertEquals(List.of("requeued", "rejected", "rejected"), faulty.settled);
        assertEquals(Set.of("guest/msg-1/LAST_RESORT"), faulty.marks);
    }
}
