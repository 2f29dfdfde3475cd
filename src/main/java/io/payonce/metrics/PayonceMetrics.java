package io.payonce.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;
import java.util.function.Predicate;

/** payonce's own meters: outcomes per operation, the defence that caught each duplicate (its tag is the layer), and timings. */
@ApplicationScoped
public class PayonceMetrics {

    /** What can become of a command message. */
    private static final List<String> MESSAGE_OUTCOMES = List.of("executed", "replayed", "unreplied", "requeued", "dead_lettered");

    private final MeterRegistry registry;
    private final Counter lockDegraded;

    public PayonceMetrics(MeterRegistry registry) {
        this.registry = registry;
        this.lockDegraded = Counter.builder("payonce.lock.degraded")
                .description("Pay requests that went ahead without the Redis lock because Redis failed or was slow")
                .register(registry);
        // Counted from 0 at start: a counter that first appears at 1 shows Prometheus no increase,
        // and an alert on dead letters would miss the first one.
        MESSAGE_OUTCOMES.forEach(this::messageCounter);
    }

    /**
     * One answered write: its outcome, when it has one, and the defence that recognised it as a
     * repeat, when it was one.
     */
    public void answered(String operation, Outcome outcome, RepeatDefence caughtBy) {
        if (outcome != null) {
            Counter.builder("payonce.requests")
                    .description("Write requests, by operation and outcome")
                    .tag("operation", operation)
                    .tag("outcome", outcome.tag())
                    .register(registry)
                    .increment();
        }
        if (caughtBy != null) {
            Counter.builder("payonce.duplicates")
                    .description("Repeated requests, by the layer that recognised them")
                    .tag("operation", operation)
                    .tag("layer", caughtBy.tag())
                    .register(registry)
                    .increment();
        }
    }

    /** A command message, by what became of it: executed, replayed, unreplied (acked, its reply lost twice), requeued or dead_lettered. */
    public void message(String outcome) {
        messageCounter(outcome).increment();
    }

    private Counter messageCounter(String outcome) {
        return Counter.builder("payonce.messages")
                .description("Command messages, by what became of them")
                .tag("outcome", outcome)
                .register(registry);
    }

    public void lockDegraded() {
        lockDegraded.increment();
    }

    /** Times {@code work} from subscription to its item or failure. */
    public <T> Uni<T> timed(String operation, Uni<T> work) {
        Timer timer = operationTimer(operation);
        return Uni.createFrom().deferred(() -> {
            Timer.Sample sample = Timer.start(registry);
            return work.onTermination().invoke(() -> sample.stop(timer));
        });
    }

    /**
     * Like {@link #timed}, for a lookup that may find no answer yet: only an item that {@code answered}
     * says is an answer is timed. A request that goes on from there is timed, if at all, by what
     * answers it; a lookup that fails is no answer of its own.
     */
    public <T> Uni<T> timedIfAnswered(String operation, Uni<T> lookup, Predicate<T> answered) {
        Timer timer = operationTimer(operation);
        return Uni.createFrom().deferred(() -> {
            Timer.Sample sample = Timer.start(registry);
            return lookup.invoke(item -> {
                if (answered.test(item)) {
                    sample.stop(timer);
                }
            });
        });
    }

    private Timer operationTimer(String operation) {
        return Timer.builder("payonce.operation")
                .description("Time to answer, by operation")
                .tag("operation", operation)
                .publishPercentileHistogram()
                .register(registry);
    }
}
