package io.payonce.commands;

import com.rabbitmq.client.GetResponse;
import io.payonce.commands.settlement.MessageSettlement;
import io.payonce.support.Api;
import io.payonce.support.Broker;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.payonce.support.Database;
import io.payonce.support.GatedStores.Outage;
import io.payonce.support.GatedStores.Store;
import io.payonce.support.GatedStores;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.RowHolder;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The consumer's connection dies while its pay is inside the transaction: the transaction commits,
 * the ack never reaches the broker, and the broker redelivers the command. The redelivery finds the
 * claim and replies with the stored answer: one debit, and the answer HTTP replays for that key.
 *
 * <p>The first run's reply may reach the sender too, before the redelivery's: whether it does depends
 * on when the broker comes back, which no sender can know, so the contract is that a reply may come
 * more than once, each copy the key's one answer. The test holds payonce to that, whenever the broker
 * returns.
 */
@QuarkusTest
@TestProfile(GatedStores.class)
@ExtendWith(LedgerInvariants.class)
class RedeliveryTest {

    private final Database db = Database.forTests();

    @Test
    void aCommandWhoseAckWasLostIsRedeliveredAndRepliedWithoutASecondDebit() throws Exception {
        Checkout payer = Buyer.withBalance(5000).checkout(1200);
        String key = "msg-" + UUID.randomUUID();
        try (Broker broker = Broker.connect()) {
            String replies = broker.replyQueue();
            // On GatedStores, with the test profile's 1 s lock wait: the debit seen waiting is run again each second, the
            // command still in hand, and the row is let go as soon as the gate is shut, well inside the four attempts
            // (about 4 s) after which the pay would answer 503 and the command go back to the queue.
            CompletableFuture<Void> release = new CompletableFuture<>();
            CompletableFuture<Void> rowReleased = RowHolder.holdAccountRowUntil(db, payer.userId(), release);
            try {
                broker.sendPay(key, replies, key, payer.userId(), payer.order());
                // The consumer takes the command; its debit then waits on the held row.
                db.awaitDebitWaitingFor(payer.userId());
                try (Outage brokerAway = GatedStores.away(Store.RABBITMQ)) {
                    // The gate is shut, the consumer's connection cut: only now may the debit take the row and commit.
                    release.complete(null);
                    rowReleased.get(10, TimeUnit.SECONDS);
                    db.awaitPayment(payer.order());
                }
            } finally {
                release.complete(null); // when the set-up failed too, not after the holder's 30 s
            }
            // The ack went with the consumer's connection, cut before the commit: the broker redelivers, and the redelivery's reply is marked.
            List<GetResponse> answers = broker.awaitRepliesUntilRepeat(replies, key, Duration.ofSeconds(40));
            Response overHttp = Api.pay(payer.bearer(), payer.order(), key);

            // A command the consumer had not taken before the cut would run afresh now, unmarked, and no marked reply would come;
            // only the first run's own reply may precede the redelivery's.
            assertTrue(answers.size() <= 2, "the redelivery's reply, and at most the first run's before it: " + answers.size());
            for (GetResponse reply : answers) {
                assertEquals(201, ((Number) reply.getProps().getHeaders().get(MessageSettlement.STATUS_HEADER)).intValue(), Broker.text(reply));
                assertEquals(overHttp.asString(), Broker.text(reply), "the key's one answer, by message and over HTTP");
            }
            assertEquals(1, db.payments(payer.order()));
            assertEquals(3800, db.balance(payer.userId()));
        }
    }
}
