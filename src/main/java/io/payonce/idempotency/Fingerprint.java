package io.payonce.idempotency;

import io.payonce.digest.HexDigest;

/**
 * What a key was first used for: SHA-256 of operation, target and the canonical request, so that a
 * key sent again with anything different is recognised however the JSON was spelled.
 */
public record Fingerprint(String operation, String target, String canonicalRequest, String sha256) {

    public static Fingerprint of(String operation, String target, String canonicalRequest) {
        String material = operation + '\n' + target + '\n' + canonicalRequest;
        return new Fingerprint(operation, target, canonicalRequest, HexDigest.sha256(material));
    }
}
