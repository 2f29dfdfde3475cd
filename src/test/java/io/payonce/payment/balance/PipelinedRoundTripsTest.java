package io.payonce.payment.balance;

import io.payonce.support.Buyer;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Database;
import io.payonce.support.GatedStores;
import io.payonce.support.GatedStores.Store;
import io.payonce.support.LedgerInvariants;
import io.payonce.support.Meters;
import io.payonce.support.TcpGate;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.List;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The pipelined pay as the network sees it, with payonce reaching MariaDB through a gate: how many
 * times a first pay waits for the database, and what happens when COMMIT reaches the server but its
 * reply never comes back.
 */
@QuarkusTest
@TestProfile(GatedStores.class)
@ExtendWith(LedgerInvariants.class)
class PipelinedRoundTripsTest {

    private static final String PIPELINED = "payonce.pipelined.transactions";
    private static final Duration ONE_WAY = Duration.ofMillis(60);
    private static final long ROUND_TRIP_MILLIS = 2 * ONE_WAY.toMillis();

    private final Database db = Database.forTests();
    private final TcpGate mariaDb = Store.MARIADB.gate();

    @Inject
    Meters meters;

    /**
     * Every chunk to and from MariaDB held 60 ms: a first pay waits 4 round trips (the joined read;
     * claim, compare-and-set, payment and debit; ledger line, event and answer; COMMIT), where one
     * statement at a time it waits 10 (11 with pipelining 1 here, red so). The fastest of five pays
     * after three warm-ups, back to back so that their connections, which have prepared every
     * statement by then, stay in the pool, lies between the two. Four round trips are the floor the
     * gate's delay sets: a pay faster than that would say the delay was not applied. The warm-ups run
     * before the gate slows: a pipelined connection opened through it takes longer than the second a
     * pay waits for one (about half the runs began with none, and read 18.6 round trips: that second,
     * then the pay one statement at a time).
     */
    @Test
    void aFirstPayWaitsForTheDatabaseFourTimes() {
        Buyer buyer = Buyer.withBalance(100_000);
        List<Checkout> checkouts = IntStream.range(0, 8).mapToObj(i -> buyer.checkout(100)).toList();
        checkouts.subList(0, 3).forEach(warmUp -> assertEquals(201, warmUp.pay().statusCode()));
        mariaDb.slow(ONE_WAY);
        try {
            long fastest = checkouts.subList(3, 8).stream().mapToLong(PipelinedRoundTripsTest::millisToPay).min().orElseThrow();

            double roundTrips = fastest / (double) ROUND_TRIP_MILLIS;
            System.out.printf("a first pay through %d ms each way: %d ms, %.1f round trips%n", ONE_WAY.toMillis(), fastest, roundTrips);
            assertTrue(roundTrips >= 4 && roundTrips < 6.5, "round trips to the database per first pay: " + roundTrips);
        } finally {
            mariaDb.slow(Duration.ZERO);
        }
    }

    /**
     * COMMIT reaches MariaDB, which commits, and the connection is cut before its reply comes back:
     * the pipelined attempt cannot know, so the pay runs the sequential transaction under the same
     * key, whose claim meets the committed one and answers with its stored answer. One payment, one
     * ledger line, one event, and the same answer on every repeat.
     */
    @Test
    void aCommitWhoseReplyIsLostIsFoundByTheSequentialTransaction() {
        Checkout payer = Buyer.withBalance(5000).checkout(1500);
        double lostBefore = meters.count(PIPELINED, "outcome", "commit_failed");
        double committedBefore = meters.count(PIPELINED, "outcome", "committed");

        mariaDb.cutAfter("autocommit = 0", "COMMIT");
        Response answer = payer.pay();

        assertTrue(mariaDb.cutDone(), "the pipelined COMMIT was cut off from its reply");
        assertEquals(201, answer.statusCode(), answer.asString());
        assertEquals("true", answer.header("Idempotent-Replayed"), "the sequential transaction met the pipelined one, committed");
        assertEquals(lostBefore + 1, meters.count(PIPELINED, "outcome", "commit_failed"));
        assertEquals(committedBefore, meters.count(PIPELINED, "outcome", "committed"));
        assertEquals("PAID", db.orderStatus(payer.order()));
        assertEquals(1, db.payments(payer.order()));
        assertEquals(3500, db.balance(payer.userId()));
        assertEquals(2, db.entries(payer.userId()), "the deposit's line and the payment's");
        assertEquals(1, db.count("SELECT COUNT(*) FROM outbox_event WHERE user_id = ? AND event_type = 'payment.succeeded'", payer.userId()));

        Response repeat = payer.pay();
        assertEquals(201, repeat.statusCode(), repeat.asString());
        assertEquals(answer.jsonPath().getLong("paymentId"), repeat.jsonPath().getLong("paymentId"));
    }

    private static long millisToPay(Checkout checkout) {
        long start = System.nanoTime();
        Response answer = checkout.pay();
        long millis = Duration.ofNanos(System.nanoTime() - start).toMillis();
        assertEquals(201, answer.statusCode(), answer.asString());
        return millis;
    }
}
