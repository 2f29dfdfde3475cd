package io.payonce.digest;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * A text's digest as lowercase hex, the form payonce stores and sends digests in: a key's
 * fingerprint (SHA-256) and a Lua script's name in Redis's script cache (SHA-1, which EVALSHA
 * requires). The text is read as UTF-8, so that a digest does not depend on the platform.
 */
public final class HexDigest {

    private HexDigest() {
    }

    public static String sha256(String text) {
        return of("SHA-256", text);
    }

    public static String sha1(String text) {
        return of("SHA-1", text);
    }

    private static String of(String algorithm, String text) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance(algorithm).digest(text.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(algorithm + " is part of every Java runtime", e);
        }
    }
}
