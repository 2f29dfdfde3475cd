package io.payonce.api;

import io.payonce.errors.ErrorCode;
import io.payonce.errors.Problem;
import io.payonce.idempotency.IdempotencyKey;
import io.payonce.input.Identifiers;
import io.quarkus.smallrye.openapi.OpenApiFilter;
import org.eclipse.microprofile.openapi.OASFilter;
import org.eclipse.microprofile.openapi.models.OpenAPI;
import org.eclipse.microprofile.openapi.models.media.Schema;
import org.eclipse.microprofile.openapi.models.parameters.Parameter;

import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Bounds every string of the API document, so that a client generated from it refuses what payonce
 * would refuse and sizes what payonce sends: a string with a pattern takes the length its pattern
 * already allows ({@code ^[A-Z]{3}$} is 3 long); a timestamp the longest ISO-8601 instant; the
 * headers and the answers' strings the bounds of what payonce stores and says, named below.
 */
@OpenApiFilter(OpenApiFilter.RunStage.BUILD)
public class StringBounds implements OASFilter {

    /**
     * An anchored pattern of one character class repeated {n} or {m,n} times, after a negative
     * lookahead that only narrows it ({@code (?!\.{1,2}$)}, never "." or "..").
     */
    private static final Pattern BOUNDED_CLASS = Pattern.compile("^\\^(?:\\(\\?![^)]*\\))?\\[[^\\]]+\\]\\{(\\d+)(?:,(\\d+))?\\}\\$$");

    /** {@code 2026-12-01T01:52:23.148278123+14:00}: nanoseconds and an offset. */
    private static final int LONGEST_DATE_TIME = 35;

    /** One to 64 characters of an Idempotency-Key: visible ASCII but the double quote and the backslash. */
    private static final String KEY_CHARACTERS = "[\\x21\\x23-\\x5B\\x5D-\\x7E]{1," + Identifiers.IDEMPOTENCY_KEY_MAX_LENGTH + "}";

    /** What {@link IdempotencyKey} accepts: its characters, bare or in double quotes. */
    static final String IDEMPOTENCY_KEY = "^(?:" + KEY_CHARACTERS + "|\"" + KEY_CHARACTERS + "\")$";

    /** The Idempotency-Key with the double quotes it may come in. */
    private static final int LONGEST_IDEMPOTENCY_KEY = Identifiers.IDEMPOTENCY_KEY_MAX_LENGTH + 2;

    /**
     * The strings of answers that no pattern bounds, by property name: the columns they are read
     * from (db/migration) or, for a problem's, what payonce writes into them.
     */
    private static final Map<String, Integer> ANSWER_STRINGS = Map.ofEntries(
            Map.entry("userId", 64),
            Map.entry("orderSn", 64),
            Map.entry("refundNo", 64),
            Map.entry("activityId", 64),
            Map.entry("currency", 3),
            Map.entry("refType", 16),
            Map.entry("refId", 64),
            Map.entry("token", 64),
            Map.entry("processorKey", 64),
            Map.entry("chargeId", 255),
            Map.entry("declineCode", 64),
            Map.entry("outcome", 16),
            Map.entry("reason", 500),
            Map.entry("settledBy", 64),
            Map.entry("reversedBy", 64),
            Map.entry("processorSaid", 2000),
            Map.entry("processorRefundId", 255),
            Map.entry("acknowledged", 1000),
            Map.entry("failureCode", 64),
            Map.entry("title", ErrorCode.LONGEST_TITLE),
            Map.entry("detail", Problem.LONGEST_DETAIL),
            Map.entry("instance", Problem.LONGEST_INSTANCE),
            Map.entry("traceId", 32),
            Map.entry("field", 64),
            Map.entry("message", 256));

    @Override
    public Parameter filterParameter(Parameter parameter) {
        if (parameter.getIn() == Parameter.In.HEADER && parameter.getSchema() != null) {
            if ("Idempotency-Key".equals(parameter.getName())) {
                parameter.getSchema().minLength(1).maxLength(LONGEST_IDEMPOTENCY_KEY).pattern(IDEMPOTENCY_KEY);
            } else if ("Submit-Token".equals(parameter.getName())) {
                parameter.getSchema().pattern(Identifiers.SUBMIT_TOKEN);
            }
        }
        return parameter;
    }

    @Override
    public void filterOpenAPI(OpenAPI openAPI) {
        if (openAPI.getComponents() != null && openAPI.getComponents().getSchemas() != null) {
            openAPI.getComponents().getSchemas().values().forEach(schema -> bound(null, schema));
        }
        if (openAPI.getPaths() != null && openAPI.getPaths().getPathItems() != null) {
            openAPI.getPaths().getPathItems().values().forEach(item -> item.getOperations().values().forEach(operation -> {
                if (operation.getParameters() != null) {
                    operation.getParameters().forEach(parameter -> bound(parameter.getName(), parameter.getSchema()));
                }
            }));
        }
    }

    private static void bound(String name, Schema schema) {
        if (schema == null) {
            return;
        }
        if (schema.getProperties() != null) {
            schema.getProperties().forEach(StringBounds::bound);
        }
        bound(name, schema.getItems());
        if (isString(schema) && schema.getEnumeration() == null && schema.getMaxLength() == null) {
            Integer longest = longest(name, schema);
            if (longest != null) {
                schema.setMaxLength(longest);
            }
        }
    }

    private static Integer longest(String name, Schema schema) {
        if (schema.getPattern() != null) {
            Matcher bounded = BOUNDED_CLASS.matcher(schema.getPattern());
            if (bounded.matches()) {
                schema.setMinLength(Integer.parseInt(bounded.group(1)));
                return Integer.parseInt(bounded.group(bounded.group(2) == null ? 1 : 2));
            }
        }
        if ("date-time".equals(schema.getFormat())) {
            return LONGEST_DATE_TIME;
        }
        return name == null ? null : ANSWER_STRINGS.get(name);
    }

    private static boolean isString(Schema schema) {
        return schema.getType() != null && schema.getType().contains(Schema.SchemaType.STRING);
    }
}
