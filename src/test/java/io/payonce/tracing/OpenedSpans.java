package io.payonce.tracing;

import io.quarkus.opentelemetry.runtime.tracing.instrumentation.InstrumentationRecorder;
import io.quarkus.opentelemetry.runtime.tracing.instrumentation.vertx.OpenTelemetryVertxTracingFactory.VertxDelegator;
import io.vertx.core.Context;
import io.vertx.core.spi.observability.HttpRequest;
import io.vertx.core.spi.tracing.SpanKind;
import io.vertx.core.spi.tracing.TagExtractor;
import io.vertx.core.spi.tracing.VertxTracer;
import io.vertx.core.tracing.TracingPolicy;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BiConsumer;

/**
 * Counts the spans Quarkus's Vert.x tracer opens while it is open, recorded or not: the requests
 * payonce receives (HTTP) and the requests it sends to its stores (SQL statements, Redis commands).
 * Its calls to the processor over HTTP are not counted: a recovery job a test before left work to
 * may make one at any moment. Whether a span is recorded is the sampler's business; this sees the
 * work done before the sampler is asked.
 */
final class OpenedSpans implements VertxTracer<Object, Object>, AutoCloseable {

    private final VertxDelegator delegator = InstrumentationRecorder.FACTORY.getVertxTracerDelegator();
    @SuppressWarnings("unchecked")
    private final VertxTracer<Object, Object> tracer = delegator.getDelegate();
    private final AtomicInteger received = new AtomicInteger();
    private final AtomicInteger sent = new AtomicInteger();

    private OpenedSpans() {
    }

    static OpenedSpans count() {
        OpenedSpans counting = new OpenedSpans();
        counting.delegator.setDelegate(counting);
        return counting;
    }

    int received() {
        return received.get();
    }

    int sent() {
        return sent.get();
    }

    @Override
    public <R> Object receiveRequest(Context context, SpanKind kind, TracingPolicy policy, R request, String operation,
            Iterable<Map.Entry<String, String>> headers, TagExtractor<R> tags) {
        Object span = tracer.receiveRequest(context, kind, policy, request, operation, headers, tags);
        if (span != null) {
            received.incrementAndGet();
        }
        return span;
    }

    @Override
    public <R> void sendResponse(Context context, R response, Object span, Throwable failure, TagExtractor<R> tags) {
        tracer.sendResponse(context, response, span, failure, tags);
    }

    @Override
    public <R> Object sendRequest(Context context, SpanKind kind, TracingPolicy policy, R request, String operation,
            BiConsumer<String, String> headers, TagExtractor<R> tags) {
        Object span = tracer.sendRequest(context, kind, policy, request, operation, headers, tags);
        if (span != null && !(request instanceof HttpRequest)) {
            sent.incrementAndGet();
        }
        return span;
    }

    @Override
    public <R> void receiveResponse(Context context, R response, Object span, Throwable failure, TagExtractor<R> tags) {
        tracer.receiveResponse(context, response, span, failure, tags);
    }

    @Override
    public void close() {
        delegator.setDelegate(tracer);
    }
}
