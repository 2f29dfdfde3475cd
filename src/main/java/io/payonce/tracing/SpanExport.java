package io.payonce.tracing;

import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.opentelemetry.sdk.trace.samplers.Sampler;
import io.quarkus.arc.lookup.LookupIfProperty;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * Where spans go, and whether they are recorded at all. Every request is traced, so that its trace
 * id reaches log lines and problem bodies and a gateway's {@code traceparent} is continued, but
 * nothing is sent anywhere unless an operator asks for it, and no instance tries to reach a
 * collector that is not there. Asking is either naming a collector in Quarkus's own settings
 * ({@code payonce-tracing.collector} reads {@code QUARKUS_OTEL_EXPORTER_OTLP_TRACES_ENDPOINT}, then
 * {@code QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT}, as an OpenTelemetry Operator injects them) or
 * {@code payonce.tracing.exporter=otlp}. Either way neither bean here is looked up: Quarkus's OTLP
 * exporter sends the spans to its configured endpoint, and Quarkus's sampler
 * ({@code quarkus.otel.traces.sampler}) chooses which traces are recorded.
 */
@ApplicationScoped
public class SpanExport {

    /** {@code otlp} to export spans; {@link #NONE}, or missing, leaves the choice to {@link #COLLECTOR}. */
    static final String EXPORTER = "payonce.tracing.exporter";
    /** The collector Quarkus's own endpoint settings name, or {@link #NONE} (application.properties maps them). */
    static final String COLLECTOR = "payonce-tracing.collector";
    static final String NONE = "none";

    @Produces
    @Singleton
    @LookupIfProperty(name = EXPORTER, stringValue = NONE, lookupIfMissing = true)
    @LookupIfProperty(name = COLLECTOR, stringValue = NONE, lookupIfMissing = true)
    SpanExporter nowhere() {
        return SpanExporter.composite();
    }

    /**
     * Nothing is recorded when nothing is exported, not even a trace the gateway sampled: a recorded
     * span costs its attributes, its end and a place in the batch processor's queue on every request,
     * SQL statement and Redis command, to be dropped here. A span the sampler drops still carries a
     * context, the gateway's trace id or a new one and a span id of its own, and that is all the MDC,
     * a problem body and a {@code traceparent} need. Such a span is not sampled, and the
     * {@code traceparent} a call to the processor carries says so.
     */
    @Produces
    @Singleton
    @LookupIfProperty(name = EXPORTER, stringValue = NONE, lookupIfMissing = true)
    @LookupIfProperty(name = COLLECTOR, stringValue = NONE, lookupIfMissing = true)
    Sampler nothingRecorded() {
        return Sampler.alwaysOff();
    }
}
