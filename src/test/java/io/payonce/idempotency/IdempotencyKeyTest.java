package io.payonce.idempotency;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

class IdempotencyKeyTest {

    @Test
    void theQuotedAndTheBareFormAreTheSameKey() {
        assertEquals(IdempotencyKey.required("8e03978e-40d5"), IdempotencyKey.required("\"8e03978e-40d5\""));
    }

    @Test
    void sixtyFourVisibleCharactersAreAKey() {
        String longest = "!~" + "a".repeat(62);

        assertEquals(longest, IdempotencyKey.required(longest).value());
    }

    @Test
    void aMissingRequiredKeyIsMissing() {
        assertEquals(ErrorCode.IDEMPOTENCY_KEY_MISSING, assertThrows(ApiException.class, () -> IdempotencyKey.required(null)).code());
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "\"\"", "with space", "tab\there", "crlf\r\nInjected: 1", "ünïcode", "quote\"inside",
            "back\\slash", "\"unterminated", " padded ", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"})
    void anythingElseIsInvalid(String header) {
        ApiException refused = assertThrows(ApiException.class, () -> IdempotencyKey.required(header));

        assertEquals(ErrorCode.IDEMPOTENCY_KEY_INVALID, refused.code());
    }
}
