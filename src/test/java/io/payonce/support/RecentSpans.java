package io.payonce.support;

import io.opentelemetry.sdk.common.CompletableResultCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SpanExporter;
import jakarta.inject.Singleton;

import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Deque;
import java.util.List;

/**
 * The spans the application under test exported last, kept in memory and bounded, so that a test
 * can read the spans of its own requests (by trace id) while the whole suite shares one instance.
 */
@Singleton
public class RecentSpans implements SpanExporter {

    private static final int KEPT = 20_000;

    private final Deque<SpanData> spans = new ArrayDeque<>();

    @Override
    public synchronized CompletableResultCode export(Collection<SpanData> batch) {
        for (SpanData span : batch) {
            if (spans.size() == KEPT) {
                spans.removeFirst();
            }
            spans.addLast(span);
        }
        return CompletableResultCode.ofSuccess();
    }

    /** The spans of one trace exported so far. */
    public synchronized List<SpanData> ofTrace(String traceId) {
        return spans.stream().filter(span -> span.getTraceId().equals(traceId)).toList();
    }

    @Override
    public CompletableResultCode flush() {
        return CompletableResultCode.ofSuccess();
    }

    @Override
    public CompletableResultCode shutdown() {
        return CompletableResultCode.ofSuccess();
    }
}
