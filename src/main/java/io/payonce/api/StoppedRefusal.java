package io.payonce.api;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.payonce.errors.ErrorCode;
import io.payonce.errors.Problem;
import io.payonce.shutdown.Draining;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpHeaders;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;

/**
 * Refuses every API request once the shutdown waits for the last pieces of work ({@link Draining}):
 * Quarkus keeps the HTTP listener open until that wait is over and would start a pay the closing
 * pool then cuts off. The refusal is a 503 the client may retry at once, on a new connection that
 * reaches an instance that stays; it comes before anything is read or written. During the shutdown
 * delay requests are still served, as readiness only just went DOWN. The management endpoints have
 * their own router and are not affected.
 */
@ApplicationScoped
public class StoppedRefusal {

    /** Before every other route, RequestLimits' included: nothing of a refused request is looked at. */
    private static final int FIRST = -10;
    private static final String RETRY_AFTER_SECONDS = "1";

    private final Draining draining;
    private final Buffer answer;

    StoppedRefusal(Draining draining, ObjectMapper json) {
        this.draining = draining;
        this.answer = problem(json);
    }

    void register(@Observes Router router) {
        router.route().order(FIRST).handler(this::refuseOnceStopped);
    }

    private void refuseOnceStopped(RoutingContext context) {
        if (!draining.refusing()) {
            context.next();
            return;
        }
        context.response()
                .setStatusCode(ErrorCode.DEPENDENCY_UNAVAILABLE.status())
                .putHeader(HttpHeaders.CONTENT_TYPE, Problem.MEDIA_TYPE)
                .putHeader("Retry-After", RETRY_AFTER_SECONDS)
                .putHeader(HttpHeaders.CONNECTION, "close")
                .end(answer);
    }

    private static Buffer problem(ObjectMapper json) {
        try {
            return Buffer.buffer(json.writeValueAsBytes(Problem.of(ErrorCode.DEPENDENCY_UNAVAILABLE,
                    "This instance is stopping; retry, and another instance answers.", null)));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("A problem always serializes", e);
        }
    }
}
