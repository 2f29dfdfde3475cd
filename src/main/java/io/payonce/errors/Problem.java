package io.payonce.errors;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.payonce.tracing.RequestTags;
import io.quarkus.runtime.annotations.RegisterForReflection;
import org.eclipse.microprofile.openapi.annotations.media.Schema;

import java.util.List;
import java.util.Map;

/** An RFC 9457 problem detail, the body of every error answer. */
@RegisterForReflection
@JsonInclude(JsonInclude.Include.NON_EMPTY)
@JsonPropertyOrder({"type", "title", "status", "detail", "instance", "code", "traceId", "errors"})
public record Problem(
        ProblemType type,
        String title,
        int status,
        String detail,
        String instance,
        String code,
        String traceId,
        List<FieldError> errors,
        @Schema(hidden = true) @JsonAnyGetter Map<String, Object> extensions) {

    public static final String MEDIA_TYPE = "application/problem+json";

    /** A detail may name what the client sent (a field, a number); past this it is cut, so that its size is known. */
    public static final int LONGEST_DETAIL = 1024;

    /** The request's path, which the HTTP layer bounds with its initial line (quarkus.http.limits.max-initial-line-length). */
    public static final int LONGEST_INSTANCE = 4096;

    public static Problem of(ErrorCode code, String detail, String instance) {
        return new Problem(ProblemType.of(code), code.title(), code.status(), bounded(detail), instance, code.name(),
                RequestTags.traceId().orElse(null), List.of(), Map.of());
    }

    public static Problem of(ApiException e, String instance) {
        return of(e.code(), e.detail(), instance).withExtensions(e.extensions());
    }

    public Problem withErrors(List<FieldError> fieldErrors) {
        return new Problem(type, title, status, detail, instance, code, traceId, List.copyOf(fieldErrors), extensions);
    }

    public Problem withExtensions(Map<String, Object> members) {
        return new Problem(type, title, status, detail, instance, code, traceId, errors, Map.copyOf(members));
    }

    private static String bounded(String detail) {
        return detail == null || detail.length() <= LONGEST_DETAIL ? detail : detail.substring(0, LONGEST_DETAIL - 1) + "…";
    }

    /** One invalid input: where it was and what is wrong with it. */
    @RegisterForReflection
    public record FieldError(String field, String message) {
    }
}
