package io.payonce.webhook;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.processor.ProcessorText;

import java.io.IOException;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * A webhook event as the processor sends it, {@code {"id":"evt_…","type":"charge.succeeded",
 * "created":…,"data":{"object":{…}}}}, the object being the charge or refund it is about. Read only
 * once its signature is verified; an envelope payonce cannot read is refused, whoever signed it.
 */
record ProcessorEvent(String id, String type, JsonNode object) {

    /** The characters of the processor's ids, at the length the inbox holds: an id that is not one is refused, never mangled into another's. */
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9._:-]{1,255}");

    private static final Pattern TYPE = Pattern.compile("[a-z0-9_.]{1,64}");

    /** The keys payonce makes its charges and refunds under (pay_record, refund_record.processor_key); any other names one payonce did not make. */
    private static final Pattern PAYONCE_KEY = Pattern.compile("[A-Za-z0-9._:-]{1,64}");

    static ProcessorEvent read(ObjectMapper json, byte[] body) {
        JsonNode root;
        try {
            root = json.readTree(body);
        } catch (IOException unreadable) {
            throw malformed("the body is not one JSON document");
        }
        if (root == null || !root.isObject()) {
            throw malformed("the body is not a JSON object");
        }
        String id = textOf(root.path("id"));
        if (id == null || !ID.matcher(id).matches()) {
            throw malformed("id must be 1 to 255 characters of A-Z, a-z, 0-9, '.', '_', ':' and '-'");
        }
        String type = textOf(root.path("type"));
        if (type == null || !TYPE.matcher(type).matches()) {
            throw malformed("type must be 1 to 64 characters of a-z, 0-9, '.' and '_'");
        }
        JsonNode object = root.path("data").path("object");
        if (!object.isObject()) {
            throw malformed("data.object must be the object the event is about");
        }
        return new ProcessorEvent(id, type, object);
    }

    Optional<ProcessorEventType> known() {
        return ProcessorEventType.named(type);
    }

    /** The object's id, as the inbox keeps it: exactly, or null when it names none or one payonce cannot keep ({@link ProcessorText#id}). */
    String objectId() {
        return ProcessorText.id(scalar("id"), ProcessorText.ID_LENGTH);
    }

    /** The key the object was made under, as the inbox keeps it; null when it names none. */
    String keyAsKept() {
        return ProcessorText.of(scalar("idempotency_key"), ProcessorText.ID_LENGTH);
    }

    /** The key the object was made under, when it could be one of payonce's; empty otherwise. */
    Optional<String> payonceKey() {
        String key = scalar("idempotency_key");
        return key != null && PAYONCE_KEY.matcher(key).matches() ? Optional.of(key) : Optional.empty();
    }

    static ApiException malformed(String why) {
        return new ApiException(ErrorCode.MALFORMED_REQUEST, why);
    }

    private String scalar(String field) {
        JsonNode value = object.path(field);
        return value.isValueNode() && !value.isNull() ? value.asText() : null;
    }

    private static String textOf(JsonNode node) {
        return node.isTextual() ? node.textValue() : null;
    }
}
