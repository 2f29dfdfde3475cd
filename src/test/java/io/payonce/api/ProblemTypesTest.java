package io.payonce.api;

import io.payonce.support.Api;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Every problem's type is a link that resolves, on the service, to a page about its code. */
@QuarkusTest
class ProblemTypesTest {

    @Test
    void everyCodesTypeResolvesToItsPageWithoutAToken() {
        for (ErrorCode code : ErrorCode.values()) {
            Response page = RestAssured.given().accept("text/html").get(code.type());

            assertEquals(200, page.statusCode(), code + ": " + page.asString());
            assertTrue(page.contentType().startsWith("text/html"), page.contentType());
            assertEquals("nosniff", page.header("X-Content-Type-Options"), "a browser never reads a page as another type");
            String html = page.asString();
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
        assertEquals("/problems/idempotency-key-missing", type);
        String page = RestAssured.get(type).asString();
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
        for (ErrorCode code : ErrorCode.values()) {
            assertTrue(index.contains("href=\"" + code.type() + "\""), code.name());
        }
        Response unknown = RestAssured.get(ErrorCode.TYPE_PATH + "/no-such-code");
        assertEquals(404, unknown.statusCode());
        assertEquals("NOT_FOUND", unknown.jsonPath().getString("code"));
    }
}
