package io.payonce.webhook;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.processor.WebhookSender;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The signature of a webhook delivery, checked against signatures the processor simulator makes
 * its own way: the raw body and the timestamp signed, any one of several v1 enough, the previous
 * secret too during a rotation, nothing else.
 */
class WebhookSignatureTest {

    private static final String SECRET = "whsec_test_secret_of_the_processor";
    private static final String PREVIOUS = "whsec_the_secret_before_this_one";
    private static final long NOW = 1_900_000_000L;
    private static final String BODY = "{\"id\":\"evt_1\",\"type\":\"charge.succeeded\",\"data\":{\"object\":{\"amount\":1999}}}";
    private static final Clock CLOCK = Clock.fixed(Instant.ofEpochSecond(NOW), ZoneOffset.UTC);

    private final WebhookSignature signature = new WebhookSignature(SECRET, Optional.empty(), Duration.ofMinutes(5), CLOCK);

    @Test
    void theProcessorsSignatureOfTheBodyVerifies() {
        assertDoesNotThrow(() -> verify(WebhookSender.signature(SECRET, NOW, BODY), BODY));
    }

    /** The bytes signed are the bytes that came: the same JSON with a space more is another body. */
    @Test
    void aBodyChangedInAnyByteIsRefused() {
        String header = WebhookSender.signature(SECRET, NOW, BODY);

        assertRefused(header, BODY.replace("1999", "1998"), "no v1 signature matches");
        assertRefused(header, BODY.replace(",", ", "), "no v1 signature matches");
    }

    @Test
    void anotherSecretOrAnotherTimestampIsRefused() {
        assertRefused(WebhookSender.signature("whsec_an_attackers_guess_at_it", NOW, BODY), BODY, "no v1 signature matches");
        String signedEarlier = WebhookSender.signature(SECRET, NOW - 1, BODY);
        assertRefused("t=" + NOW + signedEarlier.substring(signedEarlier.indexOf(',')), BODY, "no v1 signature matches");
    }

    @Test
    void aSignatureOutsideTheToleranceIsRefusedEitherWay() {
        assertDoesNotThrow(() -> verify(WebhookSender.signature(SECRET, NOW - 300, BODY), BODY));
        assertDoesNotThrow(() -> verify(WebhookSender.signature(SECRET, NOW + 300, BODY), BODY));
        assertRefused(WebhookSender.signature(SECRET, NOW - 301, BODY), BODY, "301 s in the past");
        assertRefused(WebhookSender.signature(SECRET, NOW + 301, BODY), BODY, "301 s in the future");
    }

    /** While a secret is rolled over the processor signs with both; unknown schemes are not payonce's to check. */
    @Test
    void anyOneOfSeveralSignaturesWillDoAndOtherSchemesAreLeftAlone() {
        String current = WebhookSender.signature(SECRET, NOW, BODY);
        String old = WebhookSender.signature(PREVIOUS, NOW, BODY);
        String v1 = current.substring(current.indexOf("v1="));

        assertDoesNotThrow(() -> verify(old + "," + v1, BODY));
        assertDoesNotThrow(() -> verify("t=" + NOW + ", v0=anything, " + v1, BODY));
    }

    /**
     * payonce's side of a rotation rolls out first, holding the new secret and the one before: the
     * processor, still signing with the old one alone, or already with the new one alone, is heard.
     */
    @Test
    void aDeliverySignedWithThePreviousSecretVerifiesWhileItIsConfigured() {
        WebhookSignature rotating = new WebhookSignature(SECRET, Optional.of(PREVIOUS), Duration.ofMinutes(5), CLOCK);

        assertDoesNotThrow(() -> verify(rotating, WebhookSender.signature(PREVIOUS, NOW, BODY), BODY));
        assertDoesNotThrow(() -> verify(rotating, WebhookSender.signature(SECRET, NOW, BODY), BODY));
        assertRefused(rotating, WebhookSender.signature("whsec_an_attackers_guess_at_it", NOW, BODY), BODY, "no v1 signature matches");
        assertRefused(rotating, WebhookSender.signature(PREVIOUS, NOW - 301, BODY), BODY, "301 s in the past");
    }

    /** Once the rotation is over and the previous secret unset, what it signs is a forgery like any other. */
    @Test
    void aDeliverySignedWithThePreviousSecretIsRefusedWhenNoneIsConfigured() {
        assertRefused(WebhookSender.signature(PREVIOUS, NOW, BODY), BODY, "no v1 signature matches");
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "   ", "garbage", "t=1900000000", "v1=00", "t=,v1=00", "t=abc,v1=00", "t=-1,v1=00", "t=1900000000000,v1=00",
            "t=1,t=2,v1=00", "=1,v1=00", "t=1900000000,v1=00,v1=00,v1=00,v1=00,v1=00,v1=00,v1=00,v1=00,v1=00"})
    void aHeaderThatIsNoSignatureIsRefused(String header) {
        ApiException refused = assertThrows(ApiException.class, () -> verify(header, BODY));

        assertEquals(ErrorCode.WEBHOOK_SIGNATURE_INVALID, refused.code());
    }

    @Test
    void aMissingHeaderIsRefused() {
        assertRefused(null, BODY, "there is no Processor-Signature header");
    }

    @Test
    void aSignatureThatIsNotHexOrNotWholeMatchesNothing() {
        String header = WebhookSender.signature(SECRET, NOW, BODY);

        assertRefused(header.substring(0, header.length() - 2), BODY, "no v1 signature matches");
        assertRefused(header.substring(0, header.length() - 1) + "g", BODY, "no v1 signature matches");
        assertRefused("t=" + NOW + ",v1=", BODY, "no v1 signature matches");
    }

    private void assertRefused(String header, String body, String why) {
        assertRefused(signature, header, body, why);
    }

    private static void assertRefused(WebhookSignature by, String header, String body, String why) {
        ApiException refused = assertThrows(ApiException.class, () -> verify(by, header, body));
        assertEquals(ErrorCode.WEBHOOK_SIGNATURE_INVALID, refused.code());
        assertTrue(refused.detail().contains(why), refused.detail());
    }

    private void verify(String header, String body) {
        verify(signature, header, body);
    }

    private static void verify(WebhookSignature by, String header, String body) {
        by.verify(header, body.getBytes(StandardCharsets.UTF_8));
    }
}
