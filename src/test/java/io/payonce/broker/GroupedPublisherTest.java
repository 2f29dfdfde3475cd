package io.payonce.broker;

import com.rabbitmq.client.AMQP;
import io.payonce.support.Broker;
import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Messages published at once leave together, yet each caller learns of its own message only: one
 * routed to a queue that refuses it (full, overflow reject-publish) fails its call alone, and its
 * neighbours in the group are confirmed and delivered. Real RabbitMQ.
 */
@QuarkusTest
class GroupedPublisherTest {

    private static final Duration WITHIN = Duration.ofSeconds(10);

    @Inject
    GroupedPublisher publisher;

    @Test
    void aRefusedMessageFailsItsOwnCallAndNoNeighbours() throws Exception {
        try (Broker broker = Broker.connect()) {
            List<String> queues = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                queues.add(broker.replyQueue());
            }
            int refusing = 5;
            queues.set(refusing, broker.fullReplyQueue());

            List<Uni<String>> calls = new ArrayList<>();
            for (String queue : queues) {
                calls.add(publisher.publish(new ConfirmedPublisher.Outgoing("", queue, new AMQP.BasicProperties(),
                                queue.getBytes(StandardCharsets.UTF_8)))
                        .map(confirmed -> "confirmed")
                        .onFailure(ConfirmedPublisher.NotConfirmed.class).recoverWithItem("not confirmed"));
            }
            List<String> outcomes = Uni.join().all(calls).andFailFast().await().atMost(WITHIN);

            for (int i = 0; i < queues.size(); i++) {
                assertEquals(i == refusing ? "not confirmed" : "confirmed", outcomes.get(i), "message " + i + " of " + outcomes);
                // The full queue still holds the one message it had; every other queue got its own.
                String queue = queues.get(i);
                assertEquals(1, broker.messageCount(queue), "queue " + i);
                if (i != refusing) {
                    assertEquals(queue, Broker.text(broker.poll(queue)));
                }
            }
        }
    }
}
