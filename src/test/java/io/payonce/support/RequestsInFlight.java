package io.payonce.support;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * Requests started each on a thread of its own behind one gate, as {@link Concurrently} runs them,
 * but handed back in flight: for a test that holds one of them in its transaction, waits for the
 * others' answers, and checks that the held one is still unanswered before it lets go. Closing ends
 * the threads of any request still unanswered, so that a failed set-up leaves none behind.
 */
public final class RequestsInFlight<T> implements AutoCloseable {

    private final ExecutorService threads;
    private final List<Future<T>> requests;

    private RequestsInFlight(ExecutorService threads, List<Future<T>> requests) {
        this.threads = threads;
        this.requests = requests;
    }

    public static <T> RequestsInFlight<T> start(int copies, Callable<T> task) {
        return start(Collections.nCopies(copies, task));
    }

    public static <T> RequestsInFlight<T> start(List<Callable<T>> tasks) {
        ExecutorService threads = Executors.newFixedThreadPool(tasks.size());
        CountDownLatch gate = new CountDownLatch(1);
        List<Future<T>> requests = new ArrayList<>();
        for (Callable<T> task : tasks) {
            requests.add(threads.submit(() -> {
                gate.await();
                return task.call();
            }));
        }
        gate.countDown();
        return new RequestsInFlight<>(threads, requests);
    }

    /** How many have been answered (or have failed) so far. */
    public int answered() {
        return (int) requests.stream().filter(Future::isDone).count();
    }

    /** Whether the request given at {@code index} has been answered (or has failed). */
    public boolean isAnswered(int index) {
        return requests.get(index).isDone();
    }

    /** Returns once at least {@code count} have been answered; fails after 30 s, naming what was {@code awaited}. */
    public void awaitAnswered(int count, String awaited) {
        Await.until(() -> answered() >= count, Duration.ofSeconds(30), awaited);
    }

    /** Every answer, in the order the requests were given, each waited for up to 60 s. */
    public List<T> answers() throws Exception {
        List<T> answers = new ArrayList<>();
        for (Future<T> request : requests) {
            answers.add(request.get(60, TimeUnit.SECONDS));
        }
        return answers;
    }

    @Override
    public void close() {
        threads.shutdownNow();
    }
}
