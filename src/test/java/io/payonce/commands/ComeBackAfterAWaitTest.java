package io.payonce.commands;

import com.rabbitmq.client.GetResponse;
import io.payonce.commands.outcome.OnceRule;
import io.payonce.commands.settlement.MessageSettlement;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulatorResource;
import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Broker;
import io.payonce.support.Database;
import io.payonce.support.GatedStores.Outage;
import io.payonce.support.GatedStores.Store;
import io.payonce.support.GatedStores;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.quarkus.test.common.TestResourceScope;
import io.quarkus.test.common.WithTestResource;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.payonce.commands.CardCommands.NO_REPLY_TO;
import static io.payonce.commands.CardCommands.RECOVERY_BOUND;
import static io.payonce.commands.CardCommands.WITHIN;
import static io.payonce.commands.CardCommands.assertChargedOnce;
import static io.payonce.commands.CardCommands.awaitCharging;
import static io.payonce.commands.CardCommands.processor;
import static io.payonce.commands.CardCommands.settled;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A command with no reply-to that first waited on the queue for a store, then is told to come back
 * later, goes back to the queue once for that, as one that never waited does, and is dead-lettered
 * only when told so again. Its wait is payonce's own nack back to the queue, which makes the broker
 * flag every later delivery as redelivered: the come-back rule counts its own requeue, by its mark in
 * {@code command_requeue}, and that flag counted nothing of its own. The database goes down for
 * payonce alone, through a gate the test shuts ({@link GatedStores}) before the command is sent and
 * opens once the consumer has sent it back: every delivery after that one is flagged, however many
 * more wait for the pool to reconnect, and no delivery before it can meet the pending payment.
 */
@QuarkusTest
@TestProfile(GatedStores.class)
@WithTestResource(value = ProcessorSimulatorResource.class, scope = TestResourceScope.GLOBAL)
@ExtendWith(LedgerInvariants.class)
class ComeBackAfterAWaitTest {

    /** A failure deadline for what waits on the database: the consumer meeting it down, and the pool back once it returns. */
    private static final Duration AROUND_THE_OUTAGE = Duration.ofSeconds(30);

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    @BeforeEach
    void warmTheProcessorClient() {
        CardCommands.warmTheProcessorClientOf(getClass());
    }

    @AfterEach
    void heal() {
        processor().heal();
    }

    @Test
    void aComeBackLaterAfterAWaitForTheDatabaseGoesBackToTheQueueOnceBeforeItIsDeadLettered() throws Exception {
        try (Broker broker = Broker.connect()) {
            CardBuyer buyer = CardBuyer.withOrder(970);
            processor().failNextChargeOf(buyer.order(), Fault.TIMEOUT_AFTER_CHARGE);
            CompletableFuture<Response> first = CompletableFuture.supplyAsync(() -> buyer.payOverHttp(buyer.key(), "tok_visa"));
            awaitCharging(db, buyer);
            processor().down();
            try {
                Response pending = first.get(WITHIN.toSeconds(), TimeUnit.SECONDS);
                assertEquals(202, pending.statusCode(), pending.asString());
                String another = Api.newKey();
                double requeued = settled(meters, "requeued");

                try (Outage databaseAway = GatedStores.away(Store.MARIADB)) {
                    broker.publish(Broker.COMMANDS, "pay", Broker.commandProperties(another, NO_REPLY_TO, another), buyer.cardCommand("tok_visa"));
                    // Counted as it is nacked back, before the pause: from here on the broker flags it redelivered.
                    Await.until(() -> settled(meters, "requeued") > requeued, AROUND_THE_OUTAGE,
                            "the command sent back to the queue, having met the dead database");
                }
                GetResponse dead = broker.await(Broker.DEAD_LETTERS, m -> another.equals(m.getProps().getMessageId()), AROUND_THE_OUTAGE);

                Map<String, Object> headers = dead.getProps().getHeaders();
                String reason = String.valueOf(headers.get(MessageSettlement.REASON_HEADER));
                assertTrue(reason.startsWith("409 CARD_PAYMENT_PENDING") && reason.contains("no reply-to"), reason);
                assertEquals(1, db.count("SELECT COUNT(*) FROM command_requeue WHERE sender = ? AND message_id = ? AND rule_name = ?",
                                Broker.USER, another, OnceRule.COME_BACK_LATER.name()),
                        "sent back to the queue once for the 409 before it was dead-lettered, its wait for the database notwithstanding");
                assertEquals(0, broker.deadLetters(Set.of(another)), "dead-lettered once");
                assertEquals("PAYING", db.orderStatus(buyer.order()), "still waiting for the processor");
            } finally {
                processor().up();
            }
            Response settled = Await.until(() -> buyer.payOverHttp(buyer.key(), "tok_visa"), paid -> paid.statusCode() != 202, RECOVERY_BOUND,
                    "the first pay settled once the processor is back");
            assertEquals(201, settled.statusCode(), settled.asString());
            assertChargedOnce(db, buyer, settled.jsonPath().getLong("paymentId"));
        }
    }
}
