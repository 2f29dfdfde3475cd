package io.payonce.tracing;

import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import org.jboss.logging.MDC;

import java.util.Optional;

/**
 * What a request is about, written where an operator looks: on the request's span, so that a retry
 * that reached another instance is found by its idempotency key, and into the MDC, so that every
 * log line written while the request is handled names it. Quarkus keeps both per request (the Vert.x
 * duplicated context), and adds the trace id to the MDC itself. Only identifiers: never a token (a
 * submit token's key is its digest), a body or a secret.
 */
public final class RequestTags {

    public static final String CALLER = "caller";
    public static final String OPERATION = "operation";
    public static final String TARGET = "target";
    public static final String KEY = "idempotencyKey";

    private RequestTags() {
    }

    /** The authenticated user: {@code enduser.id} on the span, {@code caller} in the MDC. */
    public static void caller(String userId) {
        Span.current().setAttribute("enduser.id", userId);
        MDC.put(CALLER, userId);
    }

    /** A keyed write: its operation ({@code pay}), its target ({@code order:42}) and its key. */
    public static void keyed(String operation, String target, String key) {
        Span span = Span.current();
        span.setAttribute("payonce.operation", operation);
        span.setAttribute("payonce.target", target);
        span.setAttribute("payonce.idempotency_key", key);
        MDC.put(OPERATION, operation);
        MDC.put(TARGET, target);
        MDC.put(KEY, key);
    }

    /** The id of the trace the current request belongs to, when it is traced. */
    public static Optional<String> traceId() {
        SpanContext context = Span.current().getSpanContext();
        return context.isValid() ? Optional.of(context.getTraceId()) : Optional.empty();
    }
}
