package io.payonce.api;

import io.payonce.errors.ErrorCode;
import io.payonce.support.Api;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import java.net.URI;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every problem's type is an absolute link that resolves, on the service, to a page about its code. */
@QuarkusTest
class ProblemTypesTest {

    /** The test profile's payonce.public-url: where a client would reach this instance. */
    private static final String PUBLIC_URL = "http://localhost:8080";

    @Inject
    ProblemTypeUris uris;

    @Test
    void everyCodesTypeResolvesToItsPageWithoutAToken() {
        for (ErrorCode code : ErrorCode.values()) {
            Response page = RestAssured.given().accept("text/html").get(code.type());
            assertEquals(PUBLIC_URL + code.type(), uris.of(code), "the type a problem names is the page's absolute URI");

            assertEquals(200, page.statusCode(), code + ": " + page.asString());
            assertTrue(page.contentType().startsWith("text/html"), page.contentType());
            assertEquals("nosniff", page.header("X-Content-Type-Options"), "a browser never reads a page as another type");
            String html = page.asString();
            assertTrue(html.length() <= ProblemTypes.LONGEST_PAGE, "within the length the API document states");
            assertTrue(html.contains("<h1>" + code.name() + ":"), html);
            assertTrue(html.contains("HTTP " + code.status()), html);
            assertTrue(html.contains("same Idempotency-Key"), html);
        }
    }

    @Test
    void aProblemAClientReceivesLinksToThePageOfItsCode() {
        Response missingKey = Api.as(Tokens.user(Tokens.newUserId())).post("/orders/1/pay");

        assertEquals(400, missingKey.statusCode());
        String type = missingKey.jsonPath().getString("type");
        assertEquals(PUBLIC_URL + "/problems/idempotency-key-missing", type, "absolute, under payonce.public-url");
        String page = RestAssured.get(URI.create(type).getPath()).asString();
        assertTrue(page.contains("IDEMPOTENCY_KEY_MISSING"), page);
        assertTrue(page.contains("the key is still free"), page);
    }

    @Test
    void theAdviceFollowsWhatTheCodeIs() {
        assertTrue(ErrorCode.PAYMENT_IN_PROGRESS.advice().contains("Retry-After"));
        assertTrue(ErrorCode.PAYMENT_IN_PROGRESS.sameKey().startsWith("Yes"));
        assertTrue(ErrorCode.INSUFFICIENT_FUNDS.sameKey().contains("replayed"));
        assertTrue(ErrorCode.INSUFFICIENT_FUNDS.advice().contains("new key"));
        assertTrue(ErrorCode.IDEMPOTENCY_KEY_REUSED.sameKey().startsWith("No"));
        assertEquals("Order … does not exist.", ErrorCode.ORDER_NOT_FOUND.meaning());
    }

    @Test
    void theIndexListsEveryCodeAndAnUnknownCodeIsAProblem() {
        String index = RestAssured.get(ErrorCode.TYPE_PATH).asString();
        assertTrue(index.length() <= ProblemTypes.LONGEST_PAGE, "within the length the API document states");
        for (ErrorCode code : ErrorCode.values()) {
            assertTrue(index.contains("href=\"" + PUBLIC_URL + code.type() + "\""), code.name());
        }
        Response unknown = RestAssured.get(ErrorCode.TYPE_PATH + "/no-such-code");
        assertEquals(404, unknown.statusCode());
        assertEquals("NOT_FOUND", unknown.jsonPath().getString("code"));
    }
}
