package io.payonce.idempotency;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.input.Identifiers;

/**
 * The value of an Idempotency-Key header: 1 to 64 visible ASCII characters, sent bare
 * ({@code abc}) or in the IETF draft's structured-field string form ({@code "abc"}).
 */
public record IdempotencyKey(String value) {

    public static final String HEADER = "Idempotency-Key";
    static final int MAX_LENGTH = Identifiers.IDEMPOTENCY_KEY_MAX_LENGTH;

    public IdempotencyKey {
        if (!isWellFormed(value)) {
            throw new ApiException(ErrorCode.IDEMPOTENCY_KEY_INVALID);
        }
    }

    /** The key a header names; a missing or malformed one is a 400. */
    public static IdempotencyKey required(String header) {
        if (header == null) {
            throw new ApiException(ErrorCode.IDEMPOTENCY_KEY_MISSING);
        }
        return new IdempotencyKey(unquote(header));
    }

    private static String unquote(String header) {
        if (header.length() >= 2 && header.startsWith("\"") && header.endsWith("\"")) {
            return header.substring(1, header.length() - 1);
        }
        return header;
    }

    /** Visible ASCII only: no spaces, controls or non-ASCII; quotes and backslashes only outside the quoted form. */
    private static boolean isWellFormed(String key) {
        if (key == null || key.isEmpty() || key.length() > MAX_LENGTH) {
            return false;
        }
        for (int i = 0; i < key.length(); i++) {
            char c = key.charAt(i);
            if (c < 0x21 || c > 0x7E || c == '"' || c == '\\') {
                return false;
            }
        }
        return true;
    }
}
