package io.payonce.db;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;

/**
 * {@code payonce_pipelined_transactions_total}: every transaction {@link PipelinedTransactions} was
 * asked to run, by how it ended. Only {@code committed} saved round trips; every other outcome
 * committed nothing and was followed by the same work one statement at a time. A rate of
 * {@code failed} or {@code commit_failed} close to {@code committed} says the pipelined attempt costs
 * more than it saves here (busy rows, a proxy that cuts connections): turn it off with
 * {@code PAYONCE_DB_PIPELINED_PAY=false}. Every outcome is registered at 0 at start.
 */
@Startup
@ApplicationScoped
class PipelinedMeter {

    static final String NAME = "payonce.pipelined.transactions";

    /** How a pipelined transaction ended. */
    enum Outcome {
        /** Every reply as expected, and COMMIT answered. */
        COMMITTED,
        /** Not a first pay (a repeat's duplicate key, too little money, an order paid already): rolled back. */
        DECLINED,
        /** A statement failed (a busy row, a deadlock, a lost connection, no answer in time): rolled back. */
        FAILED,
        /** COMMIT failed or its reply was lost: it may have committed, and the caller's own transaction finds out. */
        COMMIT_FAILED,
        /** No pipelined connection could be had: nothing was sent. */
        NO_CONNECTION;

        String tag() {
            return name().toLowerCase(Locale.ROOT);
        }
    }

    private final Map<Outcome, Counter> counters = new EnumMap<>(Outcome.class);

    PipelinedMeter(MeterRegistry registry) {
        for (Outcome outcome : Outcome.values()) {
            counters.put(outcome, Counter.builder(NAME)
                    .description("Transactions sent pipelined, by how they ended")
                    .tag("outcome", outcome.tag())
                    .register(registry));
        }
    }

    void ended(Outcome outcome) {
        counters.get(outcome).increment();
    }
}
