package io.payonce.support;

import io.payonce.processor.WebhookSender;
import io.restassured.RestAssured;
import io.restassured.http.ContentType;
import io.restassured.response.Response;
import io.vertx.core.json.JsonObject;
import org.eclipse.microprofile.config.ConfigProvider;

import java.util.UUID;

/** Webhook deliveries as the processor makes them, signed with the secret the application under test holds. */
public final class Webhooks {

    public static final String PATH = "/processor/webhooks";

    private Webhooks() {
    }

    /** The application's PAYONCE_PROCESSOR_WEBHOOK_SECRET. */
    public static String secret() {
        return ConfigProvider.getConfig().getValue("payonce.required-in-production.processor-webhook-secret", String.class);
    }

    public static String newEventId() {
        return "evt_test_" + UUID.randomUUID().toString().replace("-", "");
    }

    /** An event about {@code object}, as the processor writes it. */
    public static String event(String id, String type, JsonObject object) {
        return WebhookSender.event(id, type, object);
    }

    /** {@code body} delivered with a signature made now with the application's secret. */
    public static Response deliver(String body) {
        return deliver(body, WebhookSender.signature(secret(), System.currentTimeMillis() / 1000, body));
    }

    public static Response deliver(String body, String signatureHeader) {
        return RestAssured.given().contentType(ContentType.JSON).header(WebhookSender.HEADER, signatureHeader).body(body).post(PATH);
    }

    /** Rows the inbox holds for {@code eventId}. */
    public static long recorded(Database db, String eventId) {
        return db.count("SELECT COUNT(*) FROM processor_event WHERE event_id = ?", eventId);
    }
}
