package io.payonce.support;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.search.Search;
import jakarta.enterprise.context.ApplicationScoped;

/** Reads counters from the application's registry, to see which path a request took. */
@ApplicationScoped
public class Meters {

    private final MeterRegistry registry;

    public Meters(MeterRegistry registry) {
        this.registry = registry;
    }

    /** The sum of all counters of that name whose tags include the given pairs; 0 when none exist yet. */
    public double count(String name, String... tagPairs) {
        Search search = registry.find(name);
        for (int i = 0; i + 1 < tagPairs.length; i += 2) {
            search = search.tag(tagPairs[i], tagPairs[i + 1]);
        }
        return search.counters().stream().mapToDouble(Counter::count).sum();
    }
}
