package io.payonce.client;

import io.payonce.support.Database;
import io.payonce.support.FreePorts;
import io.payonce.support.InstanceApi;
import io.payonce.support.PackagedInstance;
import io.payonce.support.RowHolder;
import io.payonce.support.Tokens;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packaged application SIGKILLed in the middle of a pay the client sent (its debit waiting for
 * the account row a session of the test holds), and started again at the same address: the client,
 * retrying under its one key through the outage, is told the payment, and the buyer is debited once.
 */
class ClientThroughAKillIT {

    private static final String DATABASE = "payonce_client_kill";

    private final Database db = Database.named(DATABASE);
    private final ExecutorService callers = Executors.newSingleThreadExecutor();
    private final List<PackagedInstance> instances = new ArrayList<>();

    @AfterEach
    void stop() throws InterruptedException {
        callers.shutdownNow();
        for (PackagedInstance instance : instances) {
            instance.close();
        }
    }

    @Test
    void aPayWhoseInstanceIsKilledMidwayIsOneDebitOnceTheClientIsAnswered() throws Exception {
        int port = FreePorts.next();
        PackagedInstance killed = start(port, true);
        String user = "u-" + UUID.randomUUID();
        InstanceApi.fund(port, user, 10_000);
        long order = InstanceApi.newOrder(port, Tokens.user(user), 1200);
        List<ClientListener.Attempt> attempts = new CopyOnWriteArrayList<>();
        PayonceClient client = new PayonceClient(List.of(URI.create("http://127.0.0.1:" + port)), () -> Tokens.user(user),
                RetryPolicy.DEFAULT.withDeadline(Duration.ofSeconds(90)).withMaxAttempts(100), new ClientListener() {
                    @Override
                    public void attempted(Attempt attempt) {
                        attempts.add(attempt);
                    }
                });

        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> rowReleased = RowHolder.holdAccountRowUntil(db, user, release);
        CompletableFuture<Outcome<Payment>> paying = CompletableFuture.supplyAsync(() -> client.pay(order, "pay-" + order), callers);
        db.awaitDebitWaitingFor(user);
        killed.signal("KILL");
        release.complete(null);
        rowReleased.get(10, TimeUnit.SECONDS);
        start(port, false);
        Outcome<Payment> outcome = paying.get(120, TimeUnit.SECONDS);
        System.out.printf("a pay through a SIGKILL and a restart: %d requests under one key, answered %s %d ms after the first began%n",
                attempts.size(), outcome.getClass().getSimpleName(),
                Duration.between(attempts.get(0).start(), attempts.get(attempts.size() - 1).end()).toMillis());

        Outcome.Succeeded<Payment> paid = assertInstanceOf(Outcome.Succeeded.class, outcome, outcome + " after " + attempts);
        assertEquals(order, paid.value().orderId());
        assertTrue(attempts.size() > 1 && !attempts.get(0).answered(), "the first request died with its instance: " + attempts);
        assertTrue(attempts.stream().allMatch(attempt -> attempt.key().equals("pay-" + order)), "one key throughout");
        assertEquals(1, db.payments(order));
        assertEquals(10_000 - 1200, db.balance(user));
    }

    private PackagedInstance start(int port, boolean cleanDatabase) throws Exception {
        PackagedInstance instance = PackagedInstance.startOn(port, "client-kill", DATABASE, cleanDatabase, Map.of());
        instances.add(instance);
        return instance;
    }
}
