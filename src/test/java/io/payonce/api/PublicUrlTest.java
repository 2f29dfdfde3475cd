package io.payonce.api;

import io.payonce.errors.ErrorCode;
import io.payonce.errors.ProblemType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * PAYONCE_PUBLIC_URL as every problem type and the served document name it: what is accepted and how
 * it is written, what stops the start, and that the refusal names the rule, never the value.
 */
class PublicUrlTest {

    @ParameterizedTest(name = "{0}")
    @CsvSource({
            "https://api.example.com/payonce,               https://api.example.com/payonce",
            "https://api.example.com/payonce/,              https://api.example.com/payonce",
            "https://api.example.com,                       https://api.example.com",
            "https://api.example.com/,                      https://api.example.com",
            "http://localhost:8080,                         http://localhost:8080",
            "HTTPS://api.example.com:8443/pay-once/v1,      HTTPS://api.example.com:8443/pay-once/v1",
            "https://api.example.com/zahlung/%C3%BC,        https://api.example.com/zahlung/%C3%BC",
            "https://[2001:db8::1]/payonce,                 https://[2001:db8::1]/payonce",
            "'  https://api.example.com/payonce  ',         https://api.example.com/payonce"})
    void accepted(String configured, String written) {
        assertEquals(written, ProblemTypeUris.normalised(configured));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "https://user:s3cr3t@api.example.com/payonce     | user name or password",
            "https://s3cr3t@api.example.com/payonce          | user name or password",
            "https://user:s3cr3t@api_example.com/payonce     | user name or password",
            "https://api.example.com/zahlung/ü               | ASCII",
            "https://bücher.example/payonce                  | ASCII",
            "https://api.example.com//                       | normalised",
            "https://api.example.com//payonce                | normalised",
            "https://api.example.com/payonce//               | normalised",
            "https://api.example.com/a/../b                  | normalised",
            "https://api.example.com/a/./b                   | normalised",
            "https://api.example.com/..                      | normalised",
            "https://api.example.com/a/%2E%2E/b              | normalised",
            "https://api.example.com/payonce?tenant=s3cr3t   | no query or fragment",
            "https://api.example.com/payonce#s3cr3t          | no query or fragment",
            "ftp://api.example.com/payonce                   | http or https",
            "/payonce                                        | http or https",
            "https:s3cr3t                                    | host",
            "https://api.example.com/pay once                | must be a URL",
            "https://api.example.com/%zz                     | must be a URL"})
    void refused(String configured, String rule) {
        IllegalArgumentException refusal = assertThrows(IllegalArgumentException.class, () -> ProblemTypeUris.normalised(configured));

        String message = refusal.getMessage();
        assertTrue(message.startsWith("payonce.public-url (PAYONCE_PUBLIC_URL) "), message);
        assertTrue(message.contains(rule), message);
        assertFalse(message.contains("s3cr3t") || message.contains("example") || message.contains("payonce/"), "the value is not echoed: " + message);
        assertEquals(null, refusal.getCause(), "no cause whose message would echo it");
    }

    @Test
    void atMost200CharactersAsTheConfigurationPageSays() {
        String host = "https://api.example.com";
        String longest = host + "/" + "p".repeat(200 - host.length() - 1);

        assertEquals(longest, ProblemTypeUris.normalised(longest));
        assertEquals(longest, ProblemTypeUris.normalised(longest + "/"), "the trailing slash is not counted");
        IllegalArgumentException refusal = assertThrows(IllegalArgumentException.class, () -> ProblemTypeUris.normalised(longest + "p"));
        assertTrue(refusal.getMessage().contains("at most 200 characters"), refusal.getMessage());
    }

    /** The longest public URL and the longest code's page path make a type no longer than the API document states. */
    @Test
    void theLongestTypeFitsItsDocumentedLength() {
        int longestPage = Arrays.stream(ErrorCode.values()).mapToInt(code -> code.type().length()).max().orElseThrow();

        assertTrue(ProblemTypeUris.LONGEST_PUBLIC_URL + longestPage <= ProblemType.LONGEST,
                ProblemTypeUris.LONGEST_PUBLIC_URL + " + " + longestPage);
    }
}
