package io.payonce.commands;

import io.payonce.support.Api;
import io.payonce.support.Broker;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
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
 * pay must reach an instance that stays. A profile of its own, since the pool stays closed.
 */
@QuarkusTest
@TestProfile(ClosedPoolTest.OwnInstance.class)
class ClosedPoolTest {

    @Inject
    Pool pool;

    @Test
    void aPayOnAClosedPoolIsRetriedLaterNeverDeadLettered() throws Exception {
        Checkout payer = Buyer.withBalance(5000).checkout(1200);
        pool.closeAndAwait();

        String key = "msg-" + UUID.randomUUID();
        try (Broker broker = Broker.connect()) {
            broker.sendPay(key, broker.replyQueue(), key, payer.userId(), payer.order());
            // Requeued a second after each failure: the first delivery and at least two redeliveries.
            Thread.sleep(Duration.ofSeconds(4).toMillis());
            assertEquals(0, broker.deadLetters(Set.of(key)), "a valid pay was dead-lettered");
        }

        Response overHttp = Api.pay(payer.bearer(), payer.order(), "k-" + UUID.randomUUID());
        assertEquals(503, overHttp.statusCode(), overHttp.asString());
        assertEquals("1", overHttp.header("Retry-After"));
    }

    public static final class OwnInstance implements QuarkusTestProfile {
    }
}
