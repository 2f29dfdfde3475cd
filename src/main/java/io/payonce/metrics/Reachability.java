package io.payonce.metrics;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.smallrye.mutiny.Uni;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Whether a store answered its last probe, as a gauge of 1 or 0 that operators alert on. A probe
 * that fails, or is not answered within its timeout, reads as unreachable: the question is whether
 * a pay could use the store now, and a store that answers too late cannot serve one.
 */
public final class Reachability {

    private final AtomicInteger reachable = new AtomicInteger();

    public Reachability(MeterRegistry registry, String gauge, String description) {
        Gauge.builder(gauge, reachable, AtomicInteger::get).description(description).register(registry);
    }

    /** Sends {@code probe} and says whether it was answered within {@code timeout}; never fails. */
    public Uni<Boolean> probe(Uni<?> probe, Duration timeout) {
        return probe.ifNoItem().after(timeout).fail()
                .map(answer -> true)
                .onFailure().recoverWithItem(false)
                .invoke(up -> reachable.set(up ? 1 : 0));
    }
}
