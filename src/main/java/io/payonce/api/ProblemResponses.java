package io.payonce.api;

import io.payonce.errors.ErrorCode;
import io.payonce.errors.Problem;
import io.payonce.idempotency.IdempotencyKey;
import io.quarkus.smallrye.openapi.OpenApiFilter;
import org.eclipse.microprofile.openapi.OASFactory;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.Operation;
import org.eclipse.microprofile.openapi.models.media.Schema;
import org.eclipse.microprofile.openapi.models.parameters.Parameter;
import org.eclipse.microprofile.openapi.models.responses.APIResponse;
import org.eclipse.microprofile.openapi.models.responses.APIResponses;

import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Documents the error answers every payonce endpoint shares, so that resources declare only their
 * own: each operation gets 401, 403 and 503 (except the public, static problem pages), the store's
 * 503 after an operation's own (the processor's); each keyed write (an {@code Idempotency-Key}
 * header) its key's answers before its own: 400 for a key missing or malformed, 409 while another
 * request holds it, and 422 {@code IDEMPOTENCY_KEY_REUSED}. Every 4xx or 5xx answer is described as
 * {@code application/problem+json} with the {@link Problem} schema, which {@link PayonceApi}
 * registers once for all of them, its {@code code} listing every {@link ErrorCode}.
 */
@OpenApiFilter(OpenApiFilter.RunStage.BUILD)
public class ProblemResponses implements OASFilter {

    private static final String PROBLEM_SCHEMA = "#/components/schemas/Problem";
    private static final String RETRY_AFTER = "Retry-After";
    private static final Set<String> RETRY_AFTER_STATUSES = Set.of("409", "503");
    private static final String RETRY_LATER_CODES = Arrays.stream(ErrorCode.values())
            .filter(code -> code.kind().retryAfter()).map(Enum::name).collect(Collectors.joining(", "));

    /** Quarkus declares its own 401 and 403 on a secured operation; these describe the rest. */
    private static final Map<String, String> SHARED = Map.of(
            "401", "UNAUTHENTICATED: no valid bearer token",
            "403", "FORBIDDEN: the caller's role may not do this");
    private static final String STORE_UNAVAILABLE = "DEPENDENCY_UNAVAILABLE: MariaDB or Redis unreachable; retry with the same key after "
            + "Retry-After";

    private static final String KEY_REUSED = "IDEMPOTENCY_KEY_REUSED: the key was first used for another request; names the fields that differ";
    private static final String KEY_MISSING = "IDEMPOTENCY_KEY_MISSING: this write takes an Idempotency-Key";
    private static final String KEY_INVALID = "IDEMPOTENCY_KEY_INVALID: a key is 1 to 64 visible ASCII characters, bare or in double "
            + "quotes";
    private static final String KEY_IN_USE = "IDEMPOTENCY_KEY_IN_USE: a request with this key is still running; retry after Retry-After "
            + "with the same key";

    @Override
    public void filterOpenAPI(OpenAPI openAPI) {
        listErrorCodes(openAPI);
        if (openAPI.getPaths() == null || openAPI.getPaths().getPathItems() == null) {
            return;
        }
        openAPI.getPaths().getPathItems().forEach((path, item) -> {
            if (!path.startsWith("/q/")) {
                item.getOperations().values().forEach(operation -> describeErrors(operation, !isProblemPage(path)));
            }
        });
    }

    /** The problem's {@code code} is a closed set: every {@link ErrorCode}, and nothing else. */
    private static void listErrorCodes(OpenAPI openAPI) {
        if (openAPI.getComponents() == null || openAPI.getComponents().getSchemas() == null) {
            return;
        }
        Schema problem = openAPI.getComponents().getSchemas().get("Problem");
        if (problem != null && problem.getProperties() != null && problem.getProperties().get("code") != null) {
            problem.getProperties().get("code").setEnumeration(Arrays.stream(ErrorCode.values()).<Object>map(Enum::name).toList());
        }
    }

    private static boolean isProblemPage(String path) {
        return path.equals(ErrorCode.TYPE_PATH) || path.startsWith(ErrorCode.TYPE_PATH + "/");
    }

    /** The shared answers are left out for the problem pages: public, static, with no store behind them. */
    private static void describeErrors(Operation operation, boolean withSharedAnswers) {
        APIResponses responses = operation.getResponses();
        if (responses == null) {
            return;
        }
        if (withSharedAnswers) {
            SHARED.forEach((status, description) -> {
                if (!responses.hasAPIResponse(status)) {
                    responses.addAPIResponse(status, OASFactory.createAPIResponse().description(description));
                }
            });
            add(responses, "503", STORE_UNAVAILABLE, false);
        }
        Parameter key = keyHeader(operation);
        if (key != null) {
            add(responses, "400", Boolean.TRUE.equals(key.getRequired()) ? KEY_MISSING + "; " + KEY_INVALID : KEY_INVALID, true);
            add(responses, "409", KEY_IN_USE, true);
            add(responses, "422", KEY_REUSED, true);
        }
        responses.getAPIResponses().forEach((status, response) -> {
            if (status.charAt(0) >= '4' && response.getContent() == null) {
                response.setContent(problemContent());
            }
            if (RETRY_AFTER_STATUSES.contains(status)) {
                response.addHeader(RETRY_AFTER, OASFactory.createHeader()
                        .description("Seconds to wait before sending the same request again, with the same key; present on "
                                + "the codes that may succeed shortly: " + RETRY_LATER_CODES)
                        .schema(OASFactory.createSchema().addType(Schema.SchemaType.INTEGER)));
            }
        });
    }

    /**
     * {@code description} as the answer under {@code status}, before ({@code first}) or after what the
     * operation declares of its own there, if anything; once, however often the document is filtered.
     */
    private static void add(APIResponses responses, String status, String description, boolean first) {
        APIResponse declared = responses.getAPIResponse(status);
        if (declared == null) {
            responses.addAPIResponse(status, OASFactory.createAPIResponse().description(description));
        } else if (declared.getDescription() == null) {
            declared.setDescription(description);
        } else if (!declared.getDescription().contains(description)) {
            String own = declared.getDescription();
            declared.setDescription(first ? description + "; " + own : own + "; " + description);
        }
    }

    /** The operation's Idempotency-Key header, or null for a write that takes none. */
    private static Parameter keyHeader(Operation operation) {
        return operation.getParameters() == null ? null : operation.getParameters().stream()
                .filter(parameter -> parameter.getIn() == Parameter.In.HEADER && IdempotencyKey.HEADER.equalsIgnoreCase(parameter.getName()))
                .findFirst().orElse(null);
    }

    private static org.eclipse.microprofile.openapi.models.media.Content problemContent() {
        return OASFactory.createContent().addMediaType(Problem.MEDIA_TYPE,
                OASFactory.createMediaType().schema(OASFactory.createSchema().ref(PROBLEM_SCHEMA)));
    }
}
