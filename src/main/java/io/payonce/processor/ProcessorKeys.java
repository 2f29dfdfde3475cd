package io.payonce.processor;

import io.payonce.config.PayonceConfig;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * The Idempotency-Keys payonce sends the processor, derived from what identifies the operation in
 * payonce, never drawn at random: the same request yields the same key on any instance, after any
 * crash, and after the database lost the row that recorded it (a restore from a backup, a failover
 * to a replica behind on its commits, a mistaken delete). A retry of that request then meets the
 * processor's first charge or refund under its key instead of making a second one.
 *
 * <p>A key is {@code "po_"} and the unpadded base64url of a SHA-256 over length-prefixed fields: the
 * kind of operation, the environment's namespace ({@code payonce.processor.key-namespace}, so that
 * another environment on the same processor account, or a new database whose ids start over, never
 * meets this one's keys), then the operation's own fields. Each field is its UTF-8 bytes behind their
 * length, so no two lists of fields make the same bytes, however a field's text is cut. 46 characters,
 * inside what processors accept (Stripe: 255) and the VARCHAR(64) columns that keep them; no field is
 * readable from the key, so a key in a log or at the processor tells nothing of the client's key.
 */
@ApplicationScoped
public class ProcessorKeys {

    private static final String PREFIX = "po_";

    private final String namespace;

    @Inject
    ProcessorKeys(PayonceConfig config) {
        this(config.processor().keyNamespace());
    }

    ProcessorKeys(String namespace) {
        this.namespace = namespace;
    }

    /**
     * The key of the charge that pays {@code orderId}, as the client asked under {@code idempotencyKey}
     * in {@code scope} (whose keys they are): every retry of that pay, even one the database has
     * forgotten, names the same charge.
     */
    public String charge(String scope, String idempotencyKey, long orderId) {
        return derive("charge", scope, idempotencyKey, Long.toString(orderId));
    }

    /**
     * The key of refund {@code refundNo} of the charge {@code chargeId}, as the client asked under
     * {@code idempotencyKey} in {@code scope}: every retry of that refund, even one the database has
     * forgotten, names the same refund. The charge, not the order, since the processor's charge ids
     * never come back, while a database restored from a backup hands out its lost order ids again, and
     * refund numbers such as {@code r-1} repeat from order to order.
     */
    public String refund(String scope, String idempotencyKey, String chargeId, String refundNo) {
        return derive("refund", scope, idempotencyKey, chargeId, refundNo);
    }

    private String derive(String kind, String... fields) {
        MessageDigest sha256 = sha256();
        field(sha256, kind);
        field(sha256, namespace);
        for (String field : fields) {
            field(sha256, field);
        }
        return PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(sha256.digest());
    }

    private static void field(MessageDigest digest, String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        digest.update(ByteBuffer.allocate(Integer.BYTES).putInt(bytes.length).array());
        digest.update(bytes);
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
        }
    }
}
