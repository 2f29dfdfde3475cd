package io.payonce.webhook;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.EnumMap;
import java.util.Map;

/**
 * {@code payonce_processor_webhooks_total}: every delivery of a webhook event, by what became of it.
 * The outcomes an event is recorded with, {@code repeat} for a delivery of an event already
 * recorded, and {@code refused} for one refused with nothing written (its signature, or its
 * envelope). Each is registered at start, at 0, so that an alert on one has a series before the
 * first such event ever comes.
 */
@Startup
@ApplicationScoped
class WebhookMeter {

    static final String NAME = "payonce.processor.webhooks";

    private final Map<WebhookOutcome, Counter> recorded = new EnumMap<>(WebhookOutcome.class);
    private final Counter repeats;
    private final Counter refusals;

    WebhookMeter(MeterRegistry registry) {
        for (WebhookOutcome outcome : WebhookOutcome.values()) {
            if (outcome != WebhookOutcome.RECEIVED) {
                recorded.put(outcome, counter(registry, outcome.tag()));
            }
        }
        this.repeats = counter(registry, "repeat");
        this.refusals = counter(registry, "refused");
    }

    void recorded(WebhookOutcome outcome) {
        recorded.get(outcome).increment();
    }

    void repeat() {
        repeats.increment();
    }

    void refused() {
        refusals.increment();
    }

    private static Counter counter(MeterRegistry registry, String outcome) {
        return Counter.builder(NAME)
                .description("Deliveries of the processor's webhook events, by what became of them")
                .tag("outcome", outcome)
                .register(registry);
    }
}
