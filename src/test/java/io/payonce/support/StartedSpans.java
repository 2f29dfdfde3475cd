package io.payonce.support;

import io.opentelemetry.context.Context;
import io.opentelemetry.sdk.trace.ReadWriteSpan;
import io.opentelemetry.sdk.trace.ReadableSpan;
import io.opentelemetry.sdk.trace.SpanProcessor;
import jakarta.inject.Singleton;

import java.util.ArrayDeque;
import java.util.Deque;

/**
 * The traces of the spans the application under test recorded last, bounded. The SDK hands a span
 * to its processors when it starts, before the request is answered, and only when it is recorded:
 * once a response is in, a trace missing here had no span recorded.
 */
@Singleton
public class StartedSpans implements SpanProcessor {

    private static final int KEPT = 20_000;

    private final Deque<String> traceIds = new ArrayDeque<>();

    @Override
    public synchronized void onStart(Context parent, ReadWriteSpan span) {
        if (traceIds.size() == KEPT) {
            traceIds.removeFirst();
        }
        traceIds.addLast(span.getSpanContext().getTraceId());
    }

    /** Whether a span of the trace was recorded. */
    public synchronized boolean anyOf(String traceId) {
        return traceIds.contains(traceId);
    }

    @Override
    public boolean isStartRequired() {
        return true;
    }

    @Override
    public void onEnd(ReadableSpan span) {
    }

    @Override
    public boolean isEndRequired() {
        return false;
    }
}
