package io.payonce.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.payonce.api.ErrorCode;
import io.payonce.support.Management;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The OpenAPI document, parsed: what each write endpoint declares of its key and its problems. */
@QuarkusTest
class OpenApiDocumentTest {

    private static final String PROBLEM = "#/components/schemas/Problem";

    private JsonNode document;

    @BeforeEach
    void readTheDocument() throws Exception {
        Response response = Management.get("/q/openapi?format=json");
        assertEquals(200, response.statusCode(), response.asString());
        document = new ObjectMapper().readTree(response.asByteArray());
    }

    /** path, whether an Idempotency-Key is taken, the error statuses it must declare. */
    @ParameterizedTest(name = "POST {0}")
    @CsvSource(delimiter = '|', value = {
            "/orders                        | true  | 400 401 403 409 422 503",
            "/orders/{id}/pay               | true  | 400 401 402 403 404 409 422 503",
            "/orders/{id}/refunds           | true  | 400 401 403 404 409 422 503",
            "/orders/{id}/ship              | true  | 401 403 409 422 503",
            "/orders/{id}/complete          | true  | 401 403 409 422 503",
            "/orders/{id}/cancel            | true  | 401 403 404 409 422 503",
            "/accounts/{userId}/deposits    | true  | 400 401 403 404 409 422 503",
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
            "/orders/{id}/refunds           | 201",
            "/orders/{id}/ship              | 200",
            "/orders/{id}/complete          | 200",
            "/orders/{id}/cancel            | 200",
            "/accounts/{userId}/deposits    | 201",
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
            "/orders                        | 409",
            "/accounts/{userId}/deposits    | 503"})
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
            "/orders/{id}/refunds           | 201"})
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
