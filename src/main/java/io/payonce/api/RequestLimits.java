package io.payonce.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.payonce.config.PayonceConfig;
import io.payonce.errors.ErrorCode;
import io.payonce.errors.Problem;
import io.quarkus.runtime.configuration.MemorySize;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.util.Map;

/**
 * Answers an oversize request with a problem before anything reads it: a body announced larger
 * than {@code quarkus.http.limits.max-body-size} (413), or headers larger than
 * {@code payonce.max-header-bytes} (431). Quarkus's own limits stay in place behind these for
 * requests that announce nothing or exceed even the HTTP layer's bounds; those get its bare answer.
 */
@ApplicationScoped
public class RequestLimits {

    /** Runs before the route at order -2 where Quarkus enforces the body limit. */
    private static final int BEFORE_QUARKUS_LIMIT = -3;

    private final long maxBodyBytes;
    private final long maxHeaderBytes;
    private final Map<ErrorCode, Buffer> answers;

    public RequestLimits(@ConfigProperty(name = "quarkus.http.limits.max-body-size") MemorySize maxBodySize,
                         PayonceConfig config, ObjectMapper json) {
        this.maxBodyBytes = maxBodySize.asLongValue();
        this.maxHeaderBytes = config.maxHeaderBytes();
        this.answers = Map.of(
                ErrorCode.PAYLOAD_TOO_LARGE, problem(json, ErrorCode.PAYLOAD_TOO_LARGE),
                ErrorCode.HEADERS_TOO_LARGE, problem(json, ErrorCode.HEADERS_TOO_LARGE));
    }

    void register(@Observes Router router) {
        router.route().order(BEFORE_QUARKUS_LIMIT).handler(this::check);
    }

    private void check(RoutingContext context) {
        if (headerBytes(context) > maxHeaderBytes) {
            refuse(context, ErrorCode.HEADERS_TOO_LARGE);
        } else if (announcedBodyBytes(context) > maxBodyBytes) {
            refuse(context, ErrorCode.PAYLOAD_TOO_LARGE);
        } else {
            context.next();
        }
    }

    private void refuse(RoutingContext context, ErrorCode code) {
        context.response()
                .setStatusCode(code.status())
                .putHeader(HttpHeaders.CONTENT_TYPE, Problem.MEDIA_TYPE)
                .putHeader(HttpHeaders.CONNECTION, "close")
                .end(answers.get(code));
    }

    private static long headerBytes(RoutingContext context) {
        long bytes = 0;
        for (Map.Entry<String, String> header : context.request().headers()) {
            bytes += header.getKey().length() + header.getValue().length() + 4;
        }
        return bytes;
    }

    private static long announcedBodyBytes(RoutingContext context) {
        String length = context.request().getHeader(HttpHeaders.CONTENT_LENGTH);
        try {
            return length == null ? 0 : Long.parseLong(length.trim());
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    private static Buffer problem(ObjectMapper json, ErrorCode code) {
        try {
            return Buffer.buffer(json.writeValueAsBytes(Problem.of(code, code.detail(), null)));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("A problem always serializes", e);
        }
    }
}
