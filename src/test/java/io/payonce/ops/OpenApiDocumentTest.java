package io.payonce.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.idempotency.IdempotencyKey;
import io.payonce.support.Management;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.swagger.v3.parser.OpenAPIV3Parser;
import io.swagger.v3.parser.core.models.ParseOptions;
import io.swagger.v3.parser.core.models.SwaggerParseResult;
import org.eclipse.microprofile.config.ConfigProvider;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BiConsumer;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The OpenAPI document, parsed: what each write endpoint declares of its key and its problems; and
 * the document linted, both as the build stores it (target/openapi, the artefact client generators
 * take) and as a running instance serves it: no schema error, and payonce's own rules.
 */
@QuarkusTest
class OpenApiDocumentTest {

    private static final String PROBLEM = "#/components/schemas/Problem";
    private static final Path STORED = Path.of("target/openapi/openapi.json");

    private JsonNode document;

    @BeforeEach
    void readTheDocument() throws Exception {
        document = new ObjectMapper().readTree(served());
    }

    private static String served() {
        Response response = Management.get("/q/openapi?format=json");
        assertEquals(200, response.statusCode(), response.asString());
        return response.asString();
    }

    /** The stored document, or the served one: read when a test runs, once the instance is up. */
    private static String read(String which) throws IOException {
        return which.equals("stored") ? Files.readString(STORED) : served();
    }

    /** The parser's messages are the document's errors against the OpenAPI schema: a client generator would stumble on each. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"stored", "served"})
    void theDocumentHasNoSchemaError(String which) throws IOException {
        String text = read(which);
        ParseOptions options = new ParseOptions();
        options.setResolve(true);
        SwaggerParseResult parsed = new OpenAPIV3Parser().readContents(text, null, options);

        assertNotNull(parsed.getOpenAPI(), which + ": " + parsed.getMessages());
        assertEquals(List.of(), parsed.getMessages(), which);
    }

    /** A generated client names its methods after the operation ids: one each, stable, unique. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"stored", "served"})
    void everyOperationHasItsOwnId(String which) throws IOException {
        String text = read(which);
        Set<String> ids = new TreeSet<>();
        List<String> missing = new ArrayList<>();
        operations(new ObjectMapper().readTree(text)).forEach((where, operation) -> {
            String id = operation.path("operationId").asText("");
            if (id.isEmpty()) {
                missing.add(where);
            } else {
                assertTrue(ids.add(id), which + ": " + id + " named twice");
            }
        });

        assertEquals(List.of(), missing, which + ": operations without an id");
        assertTrue(ids.containsAll(List.of("payOrder", "refundOrder", "createOrder", "depositIntoAccount")), ids.toString());
    }

    /**
     * A pattern is an ECMA-262 expression that a client searches for anywhere in a value: unanchored,
     * {@code [A-Za-z0-9._@:-]{1,64}} accepts a 500-character user id that the service refuses.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"stored", "served"})
    void everyPatternIsAnchored(String which) throws IOException {
        String text = read(which);
        List<String> unanchored = new ArrayList<>();
        schemas(new ObjectMapper().readTree(text), "", (where, schema) -> {
            String pattern = schema.path("pattern").asText(null);
            if (pattern != null && !(pattern.startsWith("^") && pattern.endsWith("$"))) {
                unanchored.add(where + ": " + pattern);
            }
        });

        assertEquals(List.of(), unanchored, which);
    }

    /** A string without an enumeration has a maxLength, the headers that carry keys and tokens included. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"stored", "served"})
    void everyStringIsBounded(String which) throws IOException {
        String text = read(which);
        JsonNode parsed = new ObjectMapper().readTree(text);
        List<String> unbounded = new ArrayList<>();
        schemas(parsed, "", (where, schema) -> {
            if (isString(schema) && !schema.has("enum") && !schema.has("maxLength")) {
                unbounded.add(where);
            }
        });

        assertEquals(List.of(), unbounded, which);
        assertEquals(66, header(parsed.path("paths").path("/orders/{id}/pay").path("post"), "Idempotency-Key").path("schema")
                .path("maxLength").asInt(), which + ": 64 characters, in double quotes or not");
        assertEquals(64, header(parsed.path("paths").path("/orders").path("post"), "Submit-Token").path("schema")
                .path("maxLength").asInt(), which);
        JsonNode schemas = parsed.path("components").path("schemas");
        assertEquals(1000, schemas.path("SettlementRequest").path("properties").path("chargeId").path("maxLength").asInt(),
                which + ": an operator names an id payonce cannot keep as the processor wrote it");
        assertEquals(1000, schemas.path("RefundSettlementRequest").path("properties").path("processorRefundId").path("maxLength").asInt(), which);
        assertEquals(1000, schemas.path("RefundSettlementRequest").path("properties").path("acknowledged").path("items").path("maxLength").asInt(),
                which + ": an operator acknowledges a refund under an id payonce cannot keep as the processor wrote it");
        assertEquals(255, schemas.path("SettlementView").path("properties").path("chargeId").path("maxLength").asInt(),
                which + ": the answer shows it as the audit row keeps it");
    }

    /** Keys on either side of each rule of IdempotencyKey: length, characters, quotes. */
    private static final List<String> KEYS = List.of(
            "a", "order-1234_pay", "k".repeat(64), "k".repeat(65), "\"" + "k".repeat(64) + "\"", "\"" + "k".repeat(65) + "\"",
            "\"abc\"", "\"\"", "\"", "\"abc", "abc\"", "a\"b", "\"a\"b\"", "a\\b", "\"a\\b\"",
            "!#$%&'()*+,-./:;<=>?@[]^_`{|}~", "a b", " a", "\" a\"", "a\tb", "a\u007Fb", "zahlung-\u00FC", "\u00FC", "key-\uD83D\uDCB3", "");

    /**
     * A client generated from the document sends exactly the keys payonce takes: the documented pattern
     * accepts a key where IdempotencyKey does. A pattern is searched for in the value, as ECMA-262 does;
     * Java's regular expressions read this one the same way (no key here ends in a line break, where
     * Java's {@code $} would differ).
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"stored", "served"})
    void theIdempotencyKeyPatternAcceptsWhatPayonceAccepts(String which) throws IOException {
        JsonNode parsed = new ObjectMapper().readTree(read(which));
        List<String> disagreements = new ArrayList<>();
        for (String path : List.of("/orders/{id}/pay", "/orders/{id}/refunds", "/accounts/{userId}/deposits", "/orders", "/payments/{id}/settlement",
                "/refunds/{id}/settlement")) {
            String documented = header(parsed.path("paths").path(path).path("post"), "Idempotency-Key").path("schema").path("pattern").asText("");
            assertFalse(documented.isEmpty(), which + " " + path + " documents the key's pattern");
            Pattern pattern = Pattern.compile(documented);
            for (String key : KEYS) {
                if (pattern.matcher(key).find() != acceptedByPayonce(key)) {
                    disagreements.add(path + " " + (acceptedByPayonce(key) ? "refuses " : "accepts ") + "[" + key + "]");
                }
            }
        }

        assertEquals(List.of(), disagreements, which);
    }

    private static boolean acceptedByPayonce(String key) {
        try {
            IdempotencyKey.required(key);
            return true;
        } catch (ApiException refused) {
            assertEquals(ErrorCode.IDEMPOTENCY_KEY_INVALID, refused.code(), key);
            return false;
        }
    }

    /** Every amount a client sends is bounded by the deployment's payonce.max-amount, which the document names. */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"stored", "served"})
    void everyAmountSentHasTheConfiguredMaximum(String which) throws IOException {
        String text = read(which);
        JsonNode parsed = new ObjectMapper().readTree(text);
        long configured = ConfigProvider.getConfig().getValue("payonce.max-amount", Long.class);
        Set<String> bodies = new TreeSet<>();
        operations(parsed).values().forEach(operation -> operation.path("requestBody").path("content").forEach(media -> {
            String ref = media.path("schema").path("$ref").asText();
            bodies.add(ref.substring(ref.lastIndexOf('/') + 1));
        }));

        assertEquals(Set.of("DepositRequest", "NewAccountRequest", "NewOrderRequest", "PayRequest", "ProcessorEvent", "RefundRequest",
                        "RefundReversalRequest", "RefundSettlementRequest", "SettlementRequest"), bodies,
                which);
        for (String body : bodies) {
            JsonNode amount = parsed.path("components").path("schemas").path(body).path("properties").path("amount");
            if (!amount.isMissingNode()) {
                assertEquals(configured, amount.path("maximum").asLong(-1), which + " " + body + ".amount");
                assertEquals("payonce.max-amount", amount.path("x-maximum-setting").asText(), which + " " + body + ".amount");
            }
        }
    }

    /**
     * One requirement listing user and ops as scopes reads as "both required"; each role is an
     * alternative of its own, and the roles are listed as such.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"stored", "served"})
    void rolesAreAlternativesNotScopesRequiredTogether(String which) throws IOException {
        String text = read(which);
        Map<String, JsonNode> operations = operations(new ObjectMapper().readTree(text));
        operations.forEach((where, operation) -> operation.path("security").forEach(requirement -> requirement.fields()
                .forEachRemaining(scheme -> assertTrue(scheme.getValue().size() <= 1, which + " " + where + ": " + requirement))));

        operations.forEach((where, operation) -> assertTrue(operation.path("security").isArray(),
                which + " " + where + " states its security, an empty list where it is public"));
        assertEquals(0, operations.get("GET /problems/{type}").path("security").size(), which);
        assertEquals(0, operations.get("POST /processor/webhooks").path("security").size(), which + ": the processor signs, it has no token");
        JsonNode readOrder = operations.get("GET /orders/{id}");
        assertEquals(2, readOrder.path("security").size(), which + ": user or ops, " + readOrder.path("security"));
        assertEquals("[\"user\",\"ops\"]", readOrder.path("x-roles-any-of").toString(), which);
        assertEquals("[\"user\"]", operations.get("POST /orders/{id}/pay").path("x-roles-any-of").toString(), which);
    }

    /**
     * The server is payonce.public-url. A build that knows it (as the test profile does) stores it; a
     * build without it stores the variable {publicUrl}, and a running instance serves its own.
     */
    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"stored", "served"})
    void theServerIsWhereTheGatewayServesPayonce(String which) throws IOException {
        JsonNode servers = new ObjectMapper().readTree(read(which)).path("servers");

        assertEquals(ConfigProvider.getConfig().getValue("payonce.public-url", String.class), servers.path(0).path("url").asText(),
                which + ": " + servers);
    }

    /** path, whether an Idempotency-Key is taken, the error statuses it must declare. */
    @ParameterizedTest(name = "POST {0}")
    @CsvSource(delimiter = '|', value = {
            "/orders                        | true  | 400 401 403 409 422 503",
            "/orders/{id}/pay               | true  | 400 401 402 403 404 409 422 503",
            "/orders/{id}/refunds           | true  | 400 401 402 403 404 409 422 503",
            "/orders/{id}/ship              | true  | 400 401 403 409 422 503",
            "/orders/{id}/complete          | true  | 400 401 403 409 422 503",
            "/orders/{id}/cancel            | true  | 400 401 403 404 409 422 503",
            "/accounts/{userId}/deposits    | true  | 400 401 403 404 409 422 503",
            "/payments/{id}/settlement      | true  | 400 401 403 404 409 422 503",
            "/refunds/{id}/settlement       | true  | 400 401 403 404 409 422 503",
            "/refunds/{id}/reversal         | true  | 400 401 403 404 409 422 503",
            "/accounts                      | false | 401 403 409 503",
            "/coupons/{activityId}/grants   | false | 400 401 403 503"})
    void everyWriteDeclaresItsKeyAndItsProblems(String path, boolean keyed, String statuses) {
        JsonNode post = document.path("paths").path(path).path("post");
        assertFalse(post.isMissingNode(), "documented: POST " + path);

        assertEquals(keyed, headerParameters(post).contains("Idempotency-Key"), "Idempotency-Key on " + path);
        for (String status : statuses.split(" ")) {
            JsonNode answer = post.path("responses").path(status);
            assertFalse(answer.isMissingNode(), path + " declares " + status);
            assertEquals(PROBLEM, answer.path("content").path("application/problem+json").path("schema").path("$ref").asText(),
                    path + " " + status + " is a problem");
        }
    }

    @Test
    void theProblemCodeListsEveryErrorCodeAndNothingElse() {
        List<String> listed = new ArrayList<>();
        document.path("components").path("schemas").path("Problem").path("properties").path("code").path("enum")
                .forEach(code -> listed.add(code.asText()));

        assertEquals(Arrays.stream(ErrorCode.values()).map(Enum::name).sorted().toList(), listed.stream().sorted().toList());
    }

    @Test
    void theSubmitTokenIsDocumented() {
        assertTrue(headerParameters(document.path("paths").path("/orders").path("post")).contains("Submit-Token"));
    }

    /**
     * One repeat convention: every write's success answers document the marker a repeat carries. A
     * card pay has two: 201 once its outcome is known, and 202 while it is not (a retry then may
     * get the 202 again, replayed).
     */
    @ParameterizedTest(name = "POST {0} {1}")
    @CsvSource(delimiter = '|', value = {
            "/orders                        | 201",
            "/orders/{id}/pay               | 201 202",
            "/orders/{id}/refunds           | 201 202",
            "/orders/{id}/ship              | 200",
            "/orders/{id}/complete          | 200",
            "/orders/{id}/cancel            | 200",
            "/accounts/{userId}/deposits    | 201",
            "/payments/{id}/settlement      | 201",
            "/refunds/{id}/settlement       | 201",
            "/accounts                      | 201",
            "/coupons/{activityId}/grants   | 201"})
    void everyWriteDocumentsTheRepeatMarker(String path, String statuses) {
        JsonNode responses = document.path("paths").path(path).path("post").path("responses");
        List<String> successes = List.of(statuses.split(" "));

        successes.forEach(status -> assertFalse(responses.path(status).path("headers").path("Idempotent-Replayed").isMissingNode(),
                path + " " + status));
        responses.fieldNames().forEachRemaining(declared -> assertFalse(declared.startsWith("2") && !successes.contains(declared),
                path + " answers a repeat with the first answer's status, not " + declared));
    }

    /** Where the key is required, the document says so; where a submit token may stand in for it, it does not. */
    @ParameterizedTest(name = "POST {0}")
    @CsvSource(delimiter = '|', value = {
            "/orders/{id}/pay               | true",
            "/orders/{id}/refunds           | true",
            "/accounts/{userId}/deposits    | true",
            "/payments/{id}/settlement      | true",
            "/refunds/{id}/settlement       | true",
            "/orders                        | false"})
    void theKeyIsMarkedRequiredWhereItIs(String path, boolean required) {
        JsonNode key = header(document.path("paths").path(path).path("post"), "Idempotency-Key");

        assertEquals(required, key.path("required").asBoolean(false), path + ": " + key);
    }

    /** A 409 or 503 may ask to wait: the answers declare Retry-After. */
    @ParameterizedTest(name = "POST {0} {1}")
    @CsvSource(delimiter = '|', value = {
            "/orders/{id}/pay               | 409",
            "/orders/{id}/pay               | 503",
            "/orders/{id}/refunds           | 409",
            "/orders                        | 409",
            "/accounts/{userId}/deposits    | 503",
            "/payments/{id}/settlement      | 409",
            "/payments/{id}/settlement      | 503",
            "/refunds/{id}/settlement       | 409",
            "/refunds/{id}/settlement       | 503"})
    void answersThatMayAskToWaitDeclareRetryAfter(String path, String status) {
        JsonNode answer = document.path("paths").path(path).path("post").path("responses").path(status);

        assertEquals("integer", answer.path("headers").path("Retry-After").path("schema").path("type").asText(), path + " " + status);
    }

    /** The main calls carry examples, and every example has its schema's fields, no more (a problem: some of them). */
    @ParameterizedTest(name = "POST {0} {1}")
    @CsvSource(delimiter = '|', value = {
            "/accounts                      | request",
            "/accounts                      | 201",
            "/accounts/{userId}/deposits    | request",
            "/accounts/{userId}/deposits    | 201",
            "/orders                        | request",
            "/orders                        | 201",
            "/orders/{id}/pay               | request",
            "/orders/{id}/pay               | 201",
            "/orders/{id}/pay               | 202",
            "/orders/{id}/pay               | 402",
            "/orders/{id}/refunds           | request",
            "/orders/{id}/refunds           | 201",
            "/orders/{id}/refunds           | 202",
            "/orders/{id}/refunds           | 402",
            "/payments/{id}/settlement      | request",
            "/payments/{id}/settlement      | 201",
            "/refunds/{id}/settlement       | request",
            "/refunds/{id}/settlement       | 201"})
    void theMainCallsHaveExamplesWithTheirSchemasFields(String path, String part) throws Exception {
        JsonNode post = document.path("paths").path(path).path("post");
        JsonNode content = "request".equals(part) ? post.path("requestBody").path("content") : post.path("responses").path(part).path("content");
        assertEquals(1, content.size(), path + " " + part + ": " + content);
        JsonNode media = content.elements().next();
        String schema = media.path("schema").path("$ref").asText();
        Set<String> schemaFields = new TreeSet<>();
        document.path("components").path("schemas").path(schema.substring(schema.lastIndexOf('/') + 1)).path("properties")
                .fieldNames().forEachRemaining(schemaFields::add);
        assertFalse(schemaFields.isEmpty(), path + " " + part + " names its schema: " + media);
        assertFalse(media.path("examples").isEmpty(), path + " " + part + " has an example");

        for (JsonNode example : media.path("examples")) {
            JsonNode value = example.path("value").isTextual() ? new ObjectMapper().readTree(example.path("value").asText()) : example.path("value");
            Set<String> exampleFields = new TreeSet<>();
            value.fieldNames().forEachRemaining(exampleFields::add);
            if (schema.equals(PROBLEM)) {
                assertTrue(schemaFields.containsAll(exampleFields), exampleFields + " within " + schemaFields);
            } else {
                assertEquals(schemaFields, exampleFields, path + " " + part);
            }
        }
    }

    /**
     * A keyed write's answers about its key are written once, by the build-time filter, after what the
     * operation says of its own: a key it requires may be missing, any may be malformed, in use or
     * reused. An operation's own 503 (the processor) is followed by the store's. No answer names a
     * code twice, as it would where a resource repeats what the filter adds.
     */
    @Test
    void everyKeyedWriteDeclaresItsKeysAnswersOnceBesideItsOwn() {
        Map<String, JsonNode> keyed = new TreeMap<>();
        operations(document).forEach((name, operation) -> operation.path("parameters").forEach(parameter -> {
            if ("header".equals(parameter.path("in").asText()) && IdempotencyKey.HEADER.equals(parameter.path("name").asText())) {
                keyed.put(name, parameter);
            }
        }));
        assertTrue(keyed.size() >= 10, "keyed writes: " + keyed.keySet());
        keyed.forEach((name, key) -> {
            JsonNode responses = operations(document).get(name).path("responses");
            String malformed = responses.path("400").path("description").asText();
            assertTrue(malformed.contains("IDEMPOTENCY_KEY_INVALID"), name + " 400: " + malformed);
            assertEquals(key.path("required").asBoolean(), malformed.contains("IDEMPOTENCY_KEY_MISSING"), name + " 400: " + malformed);
            assertTrue(responses.path("409").path("description").asText().contains("IDEMPOTENCY_KEY_IN_USE"), name + " 409");
            assertTrue(responses.path("422").path("description").asText().contains("IDEMPOTENCY_KEY_REUSED"), name + " 422");
            responses.fields().forEachRemaining(answer -> {
                String description = answer.getValue().path("description").asText();
                for (ErrorCode each : ErrorCode.values()) {
                    long times = Pattern.compile("\\b" + each.name() + "\\b").matcher(description).results().count();
                    assertTrue(times <= 1, name + " " + answer.getKey() + " names " + each + " " + times + " times: " + description);
                }
            });
        });
        String settlement = operations(document).get("POST /payments/{id}/settlement").path("responses").path("503").path("description").asText();
        assertTrue(settlement.startsWith("PROCESSOR_UNAVAILABLE") && settlement.contains("; DEPENDENCY_UNAVAILABLE"), settlement);
    }

    /** The problem pages are public and static: no token to refuse, no store to be down. */
    @ParameterizedTest(name = "GET {0}")
    @CsvSource({"/problems", "/problems/{type}"})
    void theProblemPagesDeclareNoAuthenticationOrDependencyFailure(String path) {
        JsonNode responses = document.path("paths").path(path).path("get").path("responses");

        assertFalse(responses.isMissingNode(), path);
        for (String status : List.of("401", "403", "503")) {
            assertTrue(responses.path(status).isMissingNode(), path + " declares " + status);
        }
        if (path.endsWith("{type}")) {
            assertEquals(PROBLEM, responses.path("404").path("content").path("application/problem+json").path("schema").path("$ref").asText(),
                    "an unknown code is a problem");
        }
    }

    /** Each operation by "METHOD path". */
    private static Map<String, JsonNode> operations(JsonNode document) {
        Map<String, JsonNode> operations = new TreeMap<>();
        document.path("paths").fields().forEachRemaining(path -> path.getValue().fields().forEachRemaining(method -> {
            if (HTTP_METHODS.contains(method.getKey())) {
                operations.put(method.getKey().toUpperCase(Locale.ROOT) + " " + path.getKey(), method.getValue());
            }
        }));
        return operations;
    }

    private static final Set<String> HTTP_METHODS = Set.of("get", "put", "post", "delete", "options", "head", "patch", "trace");

    /** Every schema object in the document, with where it is; examples are values, not schemas, and are left out. */
    private static void schemas(JsonNode node, String where, BiConsumer<String, JsonNode> visit) {
        if (node.isObject()) {
            if (node.has("type") && (node.get("type").isTextual() || node.get("type").isArray())) {
                visit.accept(where, node);
            }
            node.fields().forEachRemaining(field -> {
                if (!field.getKey().equals("examples") && !field.getKey().equals("example")) {
                    schemas(field.getValue(), where + "/" + field.getKey(), visit);
                }
            });
        } else if (node.isArray()) {
            for (int i = 0; i < node.size(); i++) {
                schemas(node.get(i), where + "/" + i, visit);
            }
        }
    }

    private static boolean isString(JsonNode schema) {
        JsonNode type = schema.path("type");
        if (type.isArray()) {
            for (JsonNode one : type) {
                if ("string".equals(one.asText())) {
                    return true;
                }
            }
            return false;
        }
        return "string".equals(type.asText());
    }

    private static JsonNode header(JsonNode operation, String name) {
        for (JsonNode parameter : operation.path("parameters")) {
            if ("header".equals(parameter.path("in").asText()) && name.equals(parameter.path("name").asText())) {
                return parameter;
            }
        }
        throw new AssertionError("no header " + name + " on " + operation);
    }

    private static List<String> headerParameters(JsonNode operation) {
        List<String> names = new ArrayList<>();
        operation.path("parameters").forEach(parameter -> {
            if ("header".equals(parameter.path("in").asText())) {
                names.add(parameter.path("name").asText());
            }
        });
        return names;
    }
}
