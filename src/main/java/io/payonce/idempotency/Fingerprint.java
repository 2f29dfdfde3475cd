package io.payonce.idempotency;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * What a key was first used for: SHA-256 of operation, target and the canonical request, so that a
 * key sent again with anything different is recognised however the JSON was spelled.
 */
public record Fingerprint(String operation, String target, String canonicalRequest, String sha256) {

    public static Fingerprint of(String operation, String target, String canonicalRequest) {
        String material = operation + '\n' + target + '\n' + canonicalRequest;
        return new Fingerprint(operation, target, canonicalRequest, sha256Hex(material));
    }

    private static String sha256Hex(String text) {
        try {
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            return HexFormat.of().formatHex(digest.digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every Java runtime", e);
        }
    }
}
