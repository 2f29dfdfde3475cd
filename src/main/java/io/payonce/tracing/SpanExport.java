package io.payonce.tracing;

import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.quarkus.arc.lookup.LookupIfProperty;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * Where spans go. Every request is traced, so that its trace id reaches log lines and problem
 * bodies and a gateway's {@code traceparent} is continued, but nothing is sent anywhere unless an
 * operator asks for it, and no instance tries to reach a collector that is not there. Asking is
 * either naming a collector in Quarkus's own settings ({@code payonce-tracing.collector} reads
 * {@code QUARKUS_OTEL_EXPORTER_OTLP_TRACES_ENDPOINT}, then {@code QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT},
 * as an OpenTelemetry Operator injects them) or {@code payonce.tracing.exporter=otlp}. Either way this
 * bean is not looked up, and Quarkus's OTLP exporter sends the spans to its configured endpoint;
 * otherwise the spans end here.
 */
@ApplicationScoped
public class SpanExport {

    @Produces
    @Singleton
    @LookupIfProperty(name = "payonce.tracing.exporter", stringValue = "none", lookupIfMissing = true)
    @LookupIfProperty(name = "payonce-tracing.collector", stringValue = "none", lookupIfMissing = true)
    SpanExporter nowhere() {
        return SpanExporter.composite();
    }
}
