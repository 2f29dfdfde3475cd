package io.payonce.tracing;

import io.opentelemetry.sdk.trace.export.SpanExporter;
import io.quarkus.arc.lookup.LookupIfProperty;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Singleton;

/**
 * Where spans go. Every request is traced, so that its trace id reaches log lines and problem
 * bodies and a gateway's {@code traceparent} is continued, but nothing is sent anywhere unless an
 * operator asks for it: with {@code payonce.tracing.exporter=none} (the default) the spans end here,
 * and no instance tries to reach a collector that is not there. With {@code otlp} this bean is not
 * looked up, and Quarkus's OTLP exporter sends them to {@code quarkus.otel.exporter.otlp.traces.endpoint}.
 */
@ApplicationScoped
public class SpanExport {

    @Produces
    @Singleton
    @LookupIfProperty(name = "payonce.tracing.exporter", stringValue = "none", lookupIfMissing = true)
    SpanExporter nowhere() {
        return SpanExporter.composite();
    }
}
