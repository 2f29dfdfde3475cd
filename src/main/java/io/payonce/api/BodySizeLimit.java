package io.payonce.api;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.quarkus.runtime.configuration.MemorySize;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import org.eclipse.microprofile.config.inject.ConfigProperty;

/**
 * Answers an announced oversize body with a problem, before Quarkus's own limit check would close
 * the connection with an empty 413. Bodies without a Content-Length still meet that check.
 */
@ApplicationScoped
public class BodySizeLimit {

    /** Runs before the route at order -2 where Quarkus enforces the same limit. */
    private static final int BEFORE_QUARKUS_LIMIT = -3;

    private final long maxBytes;
    private final byte[] problemBody;

    public BodySizeLimit(@ConfigProperty(name = "quarkus.http.limits.max-body-size") MemorySize maxBodySize,
                         ObjectMapper json) throws Exception {
        this.maxBytes = maxBodySize.asLongValue();
        ErrorCode code = ErrorCode.PAYLOAD_TOO_LARGE;
        this.problemBody = json.writeValueAsBytes(Problem.of(code, code.detail(), null));
    }

    void register(@Observes Router router) {
        router.route().order(BEFORE_QUARKUS_LIMIT).handler(this::check);
    }

    private void check(RoutingContext context) {
        String length = context.request().getHeader(HttpHeaders.CONTENT_LENGTH);
        if (length != null && exceeds(length)) {
            context.response()
                    .setStatusCode(ErrorCode.PAYLOAD_TOO_LARGE.status())
                    .putHeader(HttpHeaders.CONTENT_TYPE, Problem.MEDIA_TYPE)
                    .putHeader(HttpHeaders.CONNECTION, "close")
                    .end(io.vertx.core.buffer.Buffer.buffer(problemBody));
            return;
        }
        context.next();
    }

    private boolean exceeds(String contentLength) {
        try {
            return Long.parseLong(contentLength.trim()) > maxBytes;
        } catch (NumberFormatException e) {
            return false;
        }
    }
}
