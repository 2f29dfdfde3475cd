package io.payonce.commands;

import com.rabbitmq.client.GetResponse;
import io.payonce.commands.settlement.MessageSettlement;
import io.payonce.support.Api;
import io.payonce.support.Broker;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.PackagedInstance;
import io.payonce.support.PrivateRabbitMq;
import io.payonce.support.RowHolder;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The consumer dies between COMMIT and ack: a packaged instance has paid a command and committed,
 * its reply is held by the broker (a memory alarm on a RabbitMQ node of the test's own blocks every
 * publisher, so the reply waits for a confirm), and the instance is killed with SIGKILL before it acks. The broker redelivers the
 * command to the next instance, which finds the claim and replies with the stored answer: one debit,
 * the answer HTTP replays for that key.
 */
class ConsumerKillIT {

    private static final String DATABASE = "payonce_consumer_kill";
    private static final Duration WITHIN = Duration.ofSeconds(60);

    private final Database db = Database.named(DATABASE);
    private final List<PackagedInstance> instances = new ArrayList<>();
    private final int previousPort = RestAssured.port;
    private PrivateRabbitMq rabbitMq;

    @BeforeEach
    void startBroker() throws Exception {
        rabbitMq = PrivateRabbitMq.start();
    }

    @AfterEach
    void stop() throws Exception {
        RestAssured.port = previousPort;
        try {
            for (PackagedInstance instance : instances) {
                instance.close();
            }
        } finally {
            if (rabbitMq != null) {
                rabbitMq.close();
            }
        }
    }

    @Test
    void aConsumerKilledAfterCommitBeforeAckGetsItsCommandRedeliveredAndReplayedWithoutASecondDebit() throws Exception {
        PackagedInstance first = start(true);
        Checkout payer = Buyer.withBalance(5000).checkout(1200);
        String key = "msg-" + UUID.randomUUID();
        try (Broker broker = Broker.connect(rabbitMq.port())) {
            String replies = broker.replyQueue();
            broker.awaitConsumer(Broker.COMMANDS, WITHIN);
            CompletableFuture<Void> release = new CompletableFuture<>();
            CompletableFuture<Void> rowReleased = RowHolder.holdAccountRowUntil(db, payer.userId(), release);
            broker.sendPay(key, replies, key, payer.userId(), payer.order());
            db.awaitDebitWaitingFor(payer.userId());
            rabbitMq.blockPublishers();
            release.complete(null);
            rowReleased.get(10, TimeUnit.SECONDS);
            db.awaitPayment(payer.order());
            // Committed; its reply waits for a confirm (2 s at most), and the ack comes only after it.
            first.signal("KILL");
            rabbitMq.unblockPublishers();

            PackagedInstance second = start(false);
            List<GetResponse> answers = broker.awaitRepliesUntilRepeat(replies, key, WITHIN);
            RestAssured.port = second.port();
            Response overHttp = Api.pay(payer.bearer(), payer.order(), key);

            System.out.printf("consumer killed between COMMIT and ack: %d replies, the last a replay; debits=%d%n",
                    answers.size(), db.payments(payer.order()));
            // The killed instance's reply, held by the alarm, may be delivered when it clears; the redelivery's is marked.
            assertTrue(answers.size() <= 2, "the killed instance's reply at most, then the redelivery's: " + answers.size());
            for (GetResponse reply : answers) {
                assertEquals(201, ((Number) reply.getProps().getHeaders().get(MessageSettlement.STATUS_HEADER)).intValue(), Broker.text(reply));
                assertEquals(overHttp.asString(), Broker.text(reply), "the key's one answer, by message and over HTTP");
            }
            assertEquals(1, db.payments(payer.order()));
            assertEquals(3800, db.balance(payer.userId()));
        }
    }

    /** An instance on the private broker; the first cleans the database, and HTTP set-up goes to it. */
    private PackagedInstance start(boolean cleanDatabase) throws Exception {
        PackagedInstance instance = PackagedInstance.start("consumer-kill", DATABASE, cleanDatabase,
                Map.of("PAYONCE_RABBITMQ_PORT", Integer.toString(rabbitMq.port())));
        instances.add(instance);
        RestAssured.port = instance.port();
        return instance;
    }
}
