package io.payonce.bench.chaos;

import io.payonce.client.ClientListener;
import io.payonce.client.Outcome;
import io.payonce.client.PayonceClient;
import io.payonce.client.RetryPolicy;

import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;

/**
 * The workload's operations over HTTP as payonce's users send them: through the client library
 * ({@code io.payonce.client}), which keeps one key per operation and does every retry, honours
 * Retry-After and follows a 202's Location. The workload sets what its clients vary: each operation's
 * first timeout (a few ms to 2 s, doubling with each retry), its deadline (the run's settle time),
 * a client that gives up after a few requests now and then (a call already reading a 202's Location
 * reads on until its deadline), and double clicks (two calls at once under one key). The client tells every request it sends; each becomes an attempt line of the history, a
 * read of a 202's Location apart (it is no request of the operation's), and its outcome settles the operation.
 */
final class ThroughTheClient {

    /** How long one call of the client may retry before the workload is told "not known yet" and calls again under the key. */
    private static final Duration CALL_DEADLINE = Duration.ofSeconds(30);
    private static final int DOUBLE_CLICK_PERCENT = 15;
    private static final Duration RESUME_AFTER = Duration.ofSeconds(1);

    /** Each target's host and port, by its index in the history. */
    private final List<String> targetAuthorities;
    private final PayonceClient client;
    private final Map<String, Workload.Operation> inFlight = new ConcurrentHashMap<>();
    /** Threads of the clicks' own: on a shared pool, the clicks of every worker would queue behind each other, neither at once nor on time. */
    private final ExecutorService clicks = Executors.newCachedThreadPool(runnable -> {
        Thread click = new Thread(runnable, "chaos-click");
        click.setDaemon(true);
        return click;
    });

    ThroughTheClient(String[] targets) {
        List<URI> addresses = Arrays.stream(targets).map(URI::create).toList();
        this.targetAuthorities = addresses.stream().map(URI::getAuthority).toList();
        this.client = new PayonceClient(addresses, () -> {
            throw new IllegalStateException("every call names its caller");
        }, RetryPolicy.DEFAULT, new History());
    }

    /**
     * Sends {@code op} through the client until its outcome is definite, the run gives up on it, or
     * (where {@code mayAbandon}) its client gives up after a few requests: then its outcome is unknown.
     */
    Workload.Outcome send(Workload.Operation op, LongSupplier giveUpAt, boolean mayAbandon) throws InterruptedException {
        Random random = ThreadLocalRandom.current();
        int abandonAfter = mayAbandon ? attemptsBeforeAbandoning(random) : RetryPolicy.MOST_ATTEMPTS;
        boolean doubleClick = random.nextInt(100) < DOUBLE_CLICK_PERCENT;
        inFlight.put(op.key, op);
        try {
            while (true) {
                long now = System.currentTimeMillis();
                long left = Math.min(giveUpAt.getAsLong() - now, CALL_DEADLINE.toMillis());
                int attemptsLeft = abandonAfter - op.attempts;
                if (left <= 0 || attemptsLeft <= 0) {
                    return Workload.Outcome.UNKNOWN;
                }
                PayonceClient caller = client.as(() -> op.bearer).with(new RetryPolicy(attemptsLeft, Duration.ofMillis(left),
                        Workload.Operation.timeout(random), Duration.ofMillis(20), Duration.ofMillis(200)));
                Outcome<?> told = doubleClick ? twoClicks(op, caller) : op.clientCall.apply(caller);
                doubleClick = false;
                if (Thread.currentThread().isInterrupted()) {
                    throw new InterruptedException("the workload is stopping");
                }
                if (!(told instanceof Outcome.Pending<?>)) {
                    Workload.Attempt answer = op.settledBy;
                    return new Workload.Outcome(answer.status() / 100 == 2 ? "ok" : "fail", answer);
                }
                // Not known yet: asked again under the key after a second, as payonce's Retry-After says, not at once.
                Thread.sleep(RESUME_AFTER.toMillis());
            }
        } finally {
            inFlight.remove(op.key);
        }
    }

    /** The same call twice, a few milliseconds apart, under the operation's one key: the first outcome that is not pending settles it. */
    private Outcome<?> twoClicks(Workload.Operation op, PayonceClient caller) throws InterruptedException {
        CompletableFuture<Outcome<?>> first = CompletableFuture.supplyAsync(() -> op.clientCall.apply(caller), clicks);
        Thread.sleep(2 + ThreadLocalRandom.current().nextInt(8));
        CompletableFuture<Outcome<?>> second = CompletableFuture.supplyAsync(() -> op.clientCall.apply(caller), clicks);
        // Both clicks end (and write their lines) before the outcome line.
        CompletableFuture.allOf(first, second).exceptionally(e -> null).join();
        return first.join() instanceof Outcome.Pending<?> ? second.join() : first.join();
    }

    /** After an answer that settled nothing, a client gives up with a chance of one in twenty: how many requests it sends. */
    private static int attemptsBeforeAbandoning(Random random) {
        return 1 + (int) Math.min(1000, Math.floor(Math.log(1 - random.nextDouble()) / Math.log(1 - Workload.ABANDON_PERCENT / 100.0)));
    }

    /** Each request the client sends, as an attempt line of its operation; reads of a 202's Location are the client's own. */
    private final class History implements ClientListener {
        @Override
        public void attempted(Attempt attempt) {
            Workload.Operation op = attempt.key() == null ? null : inFlight.get(attempt.key());
            if (op == null || !attempt.method().equals("POST")) {
                return;
            }
            Workload.Attempt answer = attempt.answered()
                    ? Workload.Operation.classify(attempt.status(), attempt.body(), attempt.replayed())
                    : Workload.Attempt.noAnswer(attempt.failure());
            op.record(targetOf(attempt), attempt.start().toEpochMilli(), attempt.end().toEpochMilli(), answer);
        }

        private int targetOf(Attempt attempt) {
            int target = targetAuthorities.indexOf(attempt.uri().getAuthority());
            if (target < 0) {
                throw new IllegalStateException("a request to " + attempt.uri() + ", no target of the run");
            }
            return target;
        }
    }
}
