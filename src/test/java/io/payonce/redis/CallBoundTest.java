package io.payonce.redis;

import io.smallrye.mutiny.TimeoutException;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** A Redis call's bound, on an event loop of a Vert.x of the test's own. */
class CallBoundTest {

    private final Vertx vertx = Vertx.vertx();

    @AfterEach
    void close() {
        vertx.close();
    }

    @Test
    void aCallWithNoAnswerFailsInTimeOnTheContextThatMadeIt() throws Exception {
        Context caller = vertx.getOrCreateContext();
        CompletableFuture<String> outcome = new CompletableFuture<>();
        long start = System.nanoTime();

        caller.runOnContext(ignored -> CallBound.within(Duration.ofMillis(100), Uni.createFrom().nothing()).subscribe().with(
                item -> outcome.complete("an item"),
                failure -> outcome.complete((failure instanceof TimeoutException ? "timed out" : failure.toString())
                        + (Vertx.currentContext() == caller ? " on the caller's context" : " elsewhere"))));

        assertEquals("timed out on the caller's context", outcome.get(5, TimeUnit.SECONDS));
        long elapsedMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertEquals(true, elapsedMillis >= 100 && elapsedMillis < 2_000, "failed after " + elapsedMillis + " ms");
    }

    @Test
    void anAnswerWithinTheBoundIsTheCallsAnswer() throws Exception {
        Context caller = vertx.getOrCreateContext();
        CompletableFuture<String> outcome = new CompletableFuture<>();

        caller.runOnContext(ignored -> CallBound.within(Duration.ofMillis(500),
                        Uni.createFrom().item("OK").onItem().delayIt().by(Duration.ofMillis(20)))
                .subscribe().with(outcome::complete, failure -> outcome.complete(failure.toString())));

        assertEquals("OK", outcome.get(5, TimeUnit.SECONDS));
    }
}
