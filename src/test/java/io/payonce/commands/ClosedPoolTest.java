package io.payonce.commands;

import io.payonce.support.Api;
import io.payonce.support.Await;
import io.payonce.support.Broker;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.payonce.support.Meters;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.QuarkusTestProfile;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.Set;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What a stopping instance meets once its drain's bound has run out: the database pool closed under
 * its work. That is a store down for now, not a bug: a pay is answered 503 with Retry-After, and a pay
 * command goes back to the queue again and again, redelivered, never to the dead-letter queue; a valid
 * pay must reach an instance that stays. A profile of its own, since the pool stays closed: this test's
 * command is the only one this instance is sent, so its count of requeued commands counts that one's.
 */
@QuarkusTest
@TestProfile(ClosedPoolTest.OwnInstance.class)
class ClosedPoolTest {

    private static final Duration WITHIN = Duration.ofSeconds(15);

    @Inject
    Pool pool;

    @Inject
    Meters meters;

    @Test
    void aPayOnAClosedPoolIsRetriedLaterNeverDeadLettered() throws Exception {
        Checkout payer = Buyer.withBalance(5000).checkout(1200);
        pool.closeAndAwait();

        String key = "msg-" + UUID.randomUUID();
        double requeued = settled("requeued");
        double deadLettered = settled("dead_lettered");
        try (Broker broker = Broker.connect()) {
            broker.sendPay(key, broker.replyQueue(), key, payer.userId(), payer.order());
            // Each delivery is counted as it is sent back to the queue, before the pause: three are the first
            // delivery's and two redeliveries', and a redelivery whose failure were taken for unforeseen would
            // have been dead-lettered instead.
            Await.until(() -> settled("requeued") >= requeued + 3, WITHIN, "the first delivery and two redeliveries sent back to the queue");

            assertEquals(deadLettered, settled("dead_lettered"), "nothing dead-lettered");
            assertEquals(0, broker.deadLetters(Set.of(key)), "a valid pay was dead-lettered");
        }

        Response overHttp = Api.pay(payer.bearer(), payer.order(), "k-" + UUID.randomUUID());
        assertEquals(503, overHttp.statusCode(), overHttp.asString());
        assertEquals("1", overHttp.header("Retry-After"));
    }

    /** How many commands this instance has settled so far with {@code outcome}. */
    private double settled(String outcome) {
        return meters.count("payonce.messages", "outcome", outcome);
    }

    public static final class OwnInstance implements QuarkusTestProfile {
    }
}
