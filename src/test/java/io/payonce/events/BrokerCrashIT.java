package io.payonce.events;

import com.rabbitmq.client.GetResponse;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Broker;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.Management;
import io.payonce.support.PackagedInstance;
import io.payonce.support.PrivateRabbitMq;
import io.restassured.RestAssured;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The broker crashes: a RabbitMQ node of the test's own is killed with SIGKILL while events it took
 * are not yet confirmed (a memory alarm holds them), and started again on its data, while the
 * packaged application pays on. No event is lost: those confirmed before survive in a durable queue,
 * those published but not confirmed stay unsent and go out again, those written while the broker
 * was down leave once it is back. None is delivered but the written ones, and every command consumer
 * comes back and takes commands again.
 */
class BrokerCrashIT {

    private static final String DATABASE = "payonce_broker_crash";
    private static final int PAYMENTS_PER_PHASE = 3;
    private static final int COMMANDS_IN_FLIGHT = 3;
    private static final Duration WITHIN = Duration.ofSeconds(60);

    private final Database db = Database.named(DATABASE);
    private final int previousPort = RestAssured.port;
    private PrivateRabbitMq rabbitMq;
    private PackagedInstance instance;
    private String audit;

    @BeforeEach
    void start() throws Exception {
        rabbitMq = PrivateRabbitMq.start();
        // Bound before any money moves: the broker drops an event that no queue takes.
        try (Broker broker = Broker.connect(rabbitMq.port())) {
            audit = broker.durableQueueOn(Broker.EVENTS, "#");
        }
        instance = PackagedInstance.start("broker-crash", DATABASE, true, Map.of("PAYONCE_RABBITMQ_PORT", Integer.toString(rabbitMq.port()),
                "PAYONCE_COMMANDS_IN_FLIGHT", Integer.toString(COMMANDS_IN_FLIGHT)));
        RestAssured.port = instance.port();
    }

    @AfterEach
    void stop() throws Exception {
        RestAssured.port = previousPort;
        try {
            if (instance != null) {
                instance.close();
            }
        } finally {
            if (rabbitMq != null) {
                rabbitMq.close();
            }
        }
    }

    @Test
    void noEventIsLostWhenTheBrokerIsKilledAndTheConsumerComesBack() throws Exception {
        Buyer buyer = Buyer.withBalance(100_000);
        payTimes(buyer.bearer());
        awaitAllSent();

        rabbitMq.blockPublishers();
        payTimes(buyer.bearer());
        // The relay tries them and the broker confirms none: the alarm holds the confirms back, or the publisher, told
        // it is blocked, fails at once. Two relay runs fail; runs never overlap, so the second began after the last
        // payment. Then the broker dies.
        double failedBefore = failedRelayRuns();
        Await.until(() -> failedRelayRuns() >= failedBefore + 2, WITHIN, "two relay runs failing on the events the broker holds back");
        long unconfirmedAtTheCrash = unsent();
        rabbitMq.kill();
        payTimes(buyer.bearer());
        long waitingWhileDown = unsent();
        rabbitMq.restart();
        payTimes(buyer.bearer());

        try (Broker broker = Broker.connect(rabbitMq.port())) {
            // Every consumer of the instance came back, not just the one that takes the command below.
            broker.awaitConsumers(Broker.COMMANDS, COMMANDS_IN_FLIGHT, WITHIN);
            long order = buyer.newOrder(100);
            String replies = broker.replyQueue();
            String key = "msg-" + UUID.randomUUID();
            broker.sendPay(key, replies, key, buyer.userId(), order);
            GetResponse reply = broker.await(replies, m -> key.equals(m.getProps().getCorrelationId()), WITHIN);
            assertEquals(201, ((Number) reply.getProps().getHeaders().get("x-payonce-status")).intValue(), Broker.text(reply));
            awaitAllSent();

            Set<String> written = new HashSet<>(db.strings("SELECT event_id FROM outbox_event"));
            List<String> delivered = new ArrayList<>();
            for (GetResponse event = broker.poll(audit); event != null; event = broker.poll(audit)) {
                delivered.add(event.getProps().getMessageId());
            }
            Set<String> distinct = new HashSet<>(delivered);
            System.out.printf("broker killed with events unconfirmed and restarted: %d events written (%d unconfirmed at the crash, "
                            + "%d waiting while it was down), %d delivered, %d distinct%n",
                    written.size(), unconfirmedAtTheCrash, waitingWhileDown, delivered.size(), distinct.size());
            assertEquals(1 + 4 * PAYMENTS_PER_PHASE + 1, written.size(), "a deposit and thirteen payments");
            assertEquals(PAYMENTS_PER_PHASE, unconfirmedAtTheCrash, "events the broker had not confirmed were not marked sent");
            assertEquals(2 * PAYMENTS_PER_PHASE, waitingWhileDown, "they, and the payments made while the broker was down, waited in the outbox");
            assertTrue(distinct.containsAll(written), "every event delivered, across the crash: " + written + " vs " + distinct);
            assertTrue(written.containsAll(distinct), "no event but the written ones: " + distinct);
        }
    }

    private void payTimes(String bearer) {
        for (int i = 0; i < PAYMENTS_PER_PHASE; i++) {
            long order = Api.newOrder(bearer, 100);
            assertEquals(201, Api.pay(bearer, order, Api.newKey()).statusCode(), "paying needs no broker");
        }
    }

    /** The instance's relay runs that failed so far, from its metrics: the packaged application is another process. */
    private double failedRelayRuns() {
        return Management.sample(instance.metrics(), "payonce_outbox_runs_total{outcome=\"failed\"}");
    }

    private long unsent() {
        return db.count("SELECT COUNT(*) FROM outbox_event WHERE sent_at IS NULL");
    }

    private void awaitAllSent() {
        Await.until(() -> unsent() == 0, WITHIN, "every event sent");
    }
}
