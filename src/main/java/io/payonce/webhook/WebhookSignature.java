package io.payonce.webhook;

import io.payonce.config.PayonceConfig;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The processor's signature of a webhook delivery, checked as the well-known processors ask:
 * {@code Processor-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256>}, the HMAC taken with the shared
 * secret over {@code "<t>.<body>"}, the body's bytes exactly as they arrived (JSON read and written
 * again would not be the bytes signed). Several {@code v1} may come, one per secret while the
 * processor rolls its secret over: any one that matches will do. During a rotation payonce holds the
 * previous secret too, if configured, and a signature by either verifies, so that the processor may
 * switch secrets at any moment of the rollout without signing with both. Each comparison takes
 * constant time, so that the time of a refusal tells nothing of how much of a forged signature was right. A
 * signature that matches but whose timestamp lies beyond the tolerance of this instance's clock is
 * refused too: a delivery recorded in passing cannot be played back later.
 */
@ApplicationScoped
class WebhookSignature {

    static final String HEADER = "Processor-Signature";

    /** A processor signs with one secret, two while it rolls one over; more is no signature of one. */
    private static final int MOST_SIGNATURES = 8;

    /** Unix seconds in digits, as signed; twelve digits reach far beyond any clock's year. */
    private static final Pattern TIMESTAMP = Pattern.compile("[0-9]{1,12}");

    private static final String ALGORITHM = "HmacSHA256";

    /** The current secret, then the previous one during a rotation. */
    private final List<SecretKeySpec> secrets;
    private final Duration tolerance;
    private final Clock clock;

    @Inject
    WebhookSignature(PayonceConfig config) {
        this(config.requiredInProduction().processorWebhookSecret(), config.processor().webhookSecretPrevious(),
                config.processor().webhookTolerance(), Clock.systemUTC());
    }

    /** {@code previous}: the secret before {@code secret} while it is rolled over, or none. */
    WebhookSignature(String secret, Optional<String> previous, Duration tolerance, Clock clock) {
        this.secrets = Stream.concat(Stream.of(secret), previous.stream())
                .map(key -> new SecretKeySpec(key.getBytes(StandardCharsets.UTF_8), ALGORITHM)).toList();
        this.tolerance = tolerance;
        this.clock = clock;
    }

    /** Returns if {@code header} signs {@code body} with a secret, recently; otherwise refuses with WEBHOOK_SIGNATURE_INVALID. */
    void verify(String header, byte[] body) {
        if (header == null || header.isBlank()) {
            throw refused("there is no " + HEADER + " header");
        }
        String timestamp = null;
        List<String> signatures = new ArrayList<>();
        for (String element : header.split(",", -1)) {
            int equals = element.indexOf('=');
            if (equals <= 0) {
                throw refused("the header is not a list of t=... and v1=... elements");
            }
            String scheme = element.substring(0, equals).trim();
            String value = element.substring(equals + 1).trim();
            if (scheme.equals("t")) {
                if (timestamp != null || !TIMESTAMP.matcher(value).matches()) {
                    throw refused("it must name one timestamp t, in seconds");
                }
                timestamp = value;
            } else if (scheme.equals("v1")) {
                signatures.add(value);
            }
            // Any other scheme (an older signature, a processor's test scheme) is not payonce's to check.
        }
        if (timestamp == null || signatures.isEmpty() || signatures.size() > MOST_SIGNATURES) {
            throw refused("it must name a timestamp t and one to " + MOST_SIGNATURES + " v1 signatures");
        }
        if (!signedByASecret(signatures, timestamp, body)) {
            throw refused("no v1 signature matches");
        }
        long age = clock.instant().getEpochSecond() - Long.parseLong(timestamp);
        if (Math.abs(age) > tolerance.toSeconds()) {
            throw refused("its timestamp lies " + Math.abs(age) + " s " + (age > 0 ? "in the past" : "in the future")
                    + ", beyond the tolerance of " + tolerance.toSeconds() + " s");
        }
    }

    /** Whether one of {@code signatures} is the HMAC of {@code timestamp} and {@code body} under one of the secrets. */
    private boolean signedByASecret(List<String> signatures, String timestamp, byte[] body) {
        List<byte[]> expected = secrets.stream().map(secret -> hmac(secret, timestamp, body)).toList();
        return signatures.stream().map(WebhookSignature::bytesOf)
                .anyMatch(signature -> expected.stream().anyMatch(ours -> MessageDigest.isEqual(ours, signature)));
    }

    private static byte[] hmac(SecretKeySpec secret, String timestamp, byte[] body) {
        try {
            Mac mac = Mac.getInstance(ALGORITHM);
            mac.init(secret);
            mac.update((timestamp + ".").getBytes(StandardCharsets.US_ASCII));
            return mac.doFinal(body);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(ALGORITHM + " is part of every Java runtime", e);
        }
    }

    /** The bytes a hex signature stands for; none for what is not hex, which then matches nothing. */
    private static byte[] bytesOf(String hex) {
        try {
            return HexFormat.of().parseHex(hex);
        } catch (IllegalArgumentException notHex) {
            return new byte[0];
        }
    }

    private static ApiException refused(String why) {
        return new ApiException(ErrorCode.WEBHOOK_SIGNATURE_INVALID, why);
    }
}
