package io.payonce.commands;

import com.rabbitmq.client.GetResponse;
import io.payonce.commands.settlement.MessageSettlement;
import io.payonce.support.Await;
import io.payonce.support.Broker;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.GatedStores.Outage;
import io.payonce.support.GatedStores.Store;
import io.payonce.support.GatedStores;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Commands that arrive while the database is down wait on the queue, none is dead-lettered, and
 * each is processed once when the database returns. The database goes down for payonce only: its
 * connections run through a gate the test shuts. Tests run one at a time, so the commands this test
 * sends are the only ones in hand while it reads the consumer's counts.
 */
@QuarkusTest
@TestProfile(GatedStores.class)
@ExtendWith(LedgerInvariants.class)
class DatabaseOutageTest {

    private static final int COMMANDS = 3;
    /** A failure deadline for the consumer to send commands back to the queue, one per command sent, while the database is away. */
    private static final Duration WITHIN = Duration.ofSeconds(30);

    private final Database db = Database.forTests();

    @Inject
    Meters meters;

    @Test
    void commandsWaitForTheDatabaseAndAreProcessedOnceWhenItReturns() throws Exception {
        Buyer buyer = Buyer.withBalance(10_000);
        List<Long> orders = new ArrayList<>();
        for (int i = 0; i < COMMANDS; i++) {
            orders.add(buyer.newOrder(1000));
        }
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            String correlation = UUID.randomUUID().toString();
            Set<String> keys = new HashSet<>();

            double requeued = settled("requeued");
            double answered = settled("executed") + settled("replayed") + settled("unreplied");
            double deadLettered = settled("dead_lettered");
            long repliedWhileDown;
            double answeredWhileDown;
            double deadLetteredWhileDown;
            try (Outage databaseAway = GatedStores.away(Store.MARIADB)) {
                for (long order : orders) {
                    String key = "msg-" + UUID.randomUUID();
                    keys.add(key);
                    broker.sendPay(key, replies, correlation, buyer.userId(), order);
                }
                // The consumer counts every command it sends back to the queue. Once it has counted as many as were
                // sent, it has met the dead database that often; a command answered or dead-lettered for the outage
                // instead would be counted so (checked below), and its order left unpaid once the database is back.
                Await.until(() -> settled("requeued") >= requeued + COMMANDS, WITHIN,
                        "the commands sent back to the queue, having met the dead database");
                repliedWhileDown = broker.messageCount(replies);
                answeredWhileDown = settled("executed") + settled("replayed") + settled("unreplied") - answered;
                deadLetteredWhileDown = settled("dead_lettered") - deadLettered;
            }
            List<GetResponse> answers = broker.awaitAll(replies, COMMANDS, m -> correlation.equals(m.getProps().getCorrelationId()),
                    Duration.ofSeconds(40));

            assertEquals(0, repliedWhileDown, "nothing is answered while the database is down");
            assertEquals(0, answeredWhileDown, "no command acked while the database is down");
            assertEquals(0, deadLetteredWhileDown, "no command dead-lettered while the database is down");
            answers.forEach(answer -> assertEquals(201,
                    ((Number) answer.getProps().getHeaders().get(MessageSettlement.STATUS_HEADER)).intValue(), Broker.text(answer)));
            for (long order : orders) {
                assertEquals(1, db.payments(order), "order " + order + " paid once");
            }
            assertEquals(10_000 - COMMANDS * 1000, db.balance(buyer.userId()));
            assertEquals(0, broker.deadLetters(keys), "nothing that would succeed was dead-lettered");
        }
    }

    /** How many commands the consumer has settled so far with {@code outcome}. */
    private double settled(String outcome) {
        return meters.count("payonce.messages", "outcome", outcome);
    }
}
