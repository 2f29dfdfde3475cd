package io.payonce.db;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.payonce.support.Api;
import io.payonce.support.Database;
import io.payonce.support.Management;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every time that leaves payonce is an instant with its offset, {@code Z}, and names the moment it
 * happened: each is compared with the test's clock around the request, within a tolerance far
 * smaller than any time zone's offset, so that a time written or read in another zone fails. A
 * stored answer is replayed as it was stored, whatever format its times had then.
 */
@QuarkusTest
class TimestampsTest {

    /** RFC 3339 {@code date-time} in UTC, as {@code Instant} writes it. */
    private static final Pattern UTC_INSTANT = Pattern.compile("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d{1,9})?Z");

    /** The database's clock and the test's run on one machine; a zone's offset is 15 minutes at least. */
    private static final Duration TOLERANCE = Duration.ofSeconds(5);

    private final Database db = Database.forTests();
    private final ObjectMapper json = new ObjectMapper();

    @Test
    void everyAnswerAndEventCarriesItsTimesAsInstantsInUtc() throws Exception {
        Instant before = Instant.now();
        String user = Tokens.newUserId();
        String bearer = Tokens.user(user);
        String ops = Tokens.ops();

        Response opened = Api.as(ops).contentType(ContentType.JSON).body(Map.of("userId", user, "currency", "EUR")).post("/accounts");
        assertEquals(201, opened.statusCode(), opened.asString());
        assertEquals(201, Api.deposit(ops, user, Api.newKey(), 5000).statusCode());
        Response created = Api.createOrder(bearer, Api.submitToken(bearer), "sn-" + UUID.randomUUID(), 1200);
        assertEquals(201, created.statusCode(), created.asString());
        long order = created.jsonPath().getLong("id");
        Response paid = Api.pay(bearer, order, Api.newKey());
        assertEquals(201, paid.statusCode(), paid.asString());
        Response shipped = Api.transition(ops, order, "ship");
        assertEquals(200, shipped.statusCode(), shipped.asString());
        Response payment = Api.as(bearer).get("/payments/" + paid.jsonPath().getLong("paymentId"));
        Response coupon = Api.as(bearer).post("/coupons/spring-sale/grants");
        assertEquals(201, coupon.statusCode(), coupon.asString());
        Response account = Api.as(bearer).get("/accounts/" + user);
        Response entries = Api.as(bearer).get("/accounts/" + user + "/entries");
        Response orderRead = Api.as(bearer).get("/orders/" + order);
        JsonNode event = json.readTree(db.string(
                "SELECT payload FROM outbox_event WHERE user_id = ? AND event_type = 'payment.succeeded'", user));
        Instant after = Instant.now();

        assertAll(
                () -> assertInstantBetween("POST /accounts createdAt", opened.jsonPath().getString("createdAt"), before, after),
                () -> assertInstantBetween("GET /accounts createdAt", account.jsonPath().getString("createdAt"), before, after),
                () -> assertInstantBetween("GET /entries createdAt", entries.jsonPath().getString("entries[0].createdAt"), before, after),
                () -> assertInstantBetween("POST /orders createdAt", created.jsonPath().getString("createdAt"), before, after),
                () -> assertInstantBetween("POST /orders updatedAt", created.jsonPath().getString("updatedAt"), before, after),
                () -> assertInstantBetween("GET /orders updatedAt", orderRead.jsonPath().getString("updatedAt"), before, after),
                () -> assertInstantBetween("POST /ship updatedAt", shipped.jsonPath().getString("updatedAt"), before, after),
                () -> assertInstantBetween("GET /payments createdAt", payment.jsonPath().getString("createdAt"), before, after),
                () -> assertInstantBetween("GET /payments updatedAt", payment.jsonPath().getString("updatedAt"), before, after),
                () -> assertInstantBetween("GET /payments history[0].at", payment.jsonPath().getString("history[0].at"), before, after),
                () -> assertInstantBetween("POST /grants grantedAt", coupon.jsonPath().getString("grantedAt"), before, after),
                () -> assertInstantBetween("payment.succeeded occurredAt", event.path("occurredAt").asText(), before, after));
    }

    @Test
    void anAnswerStoredBeforeTimesCarriedAnOffsetReplaysAsStored() {
        String bearer = Tokens.user(Tokens.newUserId());
        String key = Api.newKey();
        Map<String, Object> body = Map.of("orderSn", "sn-" + UUID.randomUUID(), "amount", 900, "currency", "EUR");
        Response first = Api.as(bearer).header("Idempotency-Key", key).contentType(ContentType.JSON).body(body).post("/orders");
        assertEquals(201, first.statusCode(), first.asString());
        String stored = first.asString()
                .replace(first.jsonPath().getString("createdAt"), "2026-12-01T01:52:23.36348")
                .replace(first.jsonPath().getString("updatedAt"), "2026-12-01T01:52:23.36348");
        assertEquals(1, db.update("UPDATE idempotency_record SET response_body = ? WHERE idem_key = ?", stored, key));

        Response replay = Api.as(bearer).header("Idempotency-Key", key).contentType(ContentType.JSON).body(body).post("/orders");

        assertEquals("true", replay.header("Idempotent-Replayed"), replay.asString());
        assertEquals(201, replay.statusCode());
        assertEquals(stored, replay.asString(), "the stored answer, byte for byte, in the format it was stored in");
    }

    @Test
    void theDocumentPromisesDateTimesAndItsExamplesKeepThePromise() throws Exception {
        Response response = Management.get("/q/openapi?format=json");
        assertEquals(200, response.statusCode(), response.asString());
        JsonNode document = json.readTree(response.asByteArray());

        JsonNode schemas = document.path("components").path("schemas");
        List<String> times = new ArrayList<>();
        schemas.forEach(schema -> schema.path("properties").properties().forEach(property -> {
            if (property.getKey().endsWith("At") || property.getKey().equals("at")) {
                times.add(property.getKey());
                String ref = property.getValue().path("$ref").asText();
                JsonNode type = ref.isEmpty() ? property.getValue() : schemas.path(ref.substring(ref.lastIndexOf('/') + 1));
                assertEquals("date-time", type.path("format").asText(), property.getKey() + ": " + property.getValue() + " " + type);
            }
        }));
        assertTrue(times.containsAll(List.of("createdAt", "updatedAt", "at")), "the times found: " + times);

        List<String> exampleTimes = new ArrayList<>();
        collectTimes(document, exampleTimes);
        assertTrue(exampleTimes.size() >= 3, "the examples' times: " + exampleTimes);
        exampleTimes.forEach(time -> assertTrue(UTC_INSTANT.matcher(time).matches(), "an example's time is not an instant in UTC: " + time));
    }

    /** The texts that read as a date and time in every example of the document, its schemas' and its calls'. */
    private void collectTimes(JsonNode node, List<String> times) throws Exception {
        for (var field : node.properties()) {
            if (field.getKey().equals("example") || field.getKey().equals("examples")) {
                collectExampleTimes(field.getValue(), times);
            } else {
                collectTimes(field.getValue(), times);
            }
        }
        if (node.isArray()) {
            for (JsonNode element : node) {
                collectTimes(element, times);
            }
        }
    }

    /** An example is JSON, or JSON as text. */
    private void collectExampleTimes(JsonNode example, List<String> times) throws Exception {
        if (example.isTextual() && example.asText().startsWith("{")) {
            collectExampleTimes(json.readTree(example.asText()), times);
        } else if (example.isTextual() && example.asText().matches("\\d{4}-\\d{2}-\\d{2}T.*")) {
            times.add(example.asText());
        }
        for (JsonNode child : example) {
            collectExampleTimes(child, times);
        }
    }

    private static void assertInstantBetween(String where, String time, Instant before, Instant after) {
        assertTrue(time != null && UTC_INSTANT.matcher(time).matches(), where + " is not an instant in UTC: " + time);
        Instant instant = Instant.parse(time);
        assertTrue(!instant.isBefore(before.minus(TOLERANCE)) && !instant.isAfter(after.plus(TOLERANCE)),
                where + " " + time + " is not the moment of the request, between " + before + " and " + after);
    }
}
