package io.payonce.api;

import io.payonce.support.Api;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.RestAssured;
import io.restassured.response.Response;
import org.junit.jupiter.api.Test;

import java.security.KeyPairGenerator;
import java.time.Duration;
import java.util.Set;

import io.smallrye.jwt.build.Jwt;

import static org.junit.jupiter.api.Assertions.assertEquals;

@QuarkusTest
class AuthenticationTest {

    /** No token is minted outside dev mode: not by this build, nor by the packaged application (AuthenticationIT). */
    @Test
    void noTokenEndpointOutsideDevMode() {
        assertEquals(404, RestAssured.get("/dev/token").statusCode());
        assertEquals(404, RestAssured.get("/dev/token?sub=ops1&ops=true").statusCode());
    }

    @Test
    void noTokenIsUnauthenticated() {
        assertUnauthenticated(RestAssured.given().get("/orders/1"));
        assertUnauthenticated(RestAssured.given().get("/orders/token"));
        assertUnauthenticated(RestAssured.given().get("/accounts/someone"));
    }

    @Test
    void anExpiredTokenIsUnauthenticated() {
        assertUnauthenticated(Api.as(Tokens.expired(Tokens.newUserId())).get("/orders/token"));
    }

    @Test
    void aTokenSignedWithAnotherKeyIsUnauthenticated() throws Exception {
        var generator = KeyPairGenerator.getInstance("RSA");
        generator.initialize(2048);
        String forged = Jwt.issuer(Tokens.ISSUER).audience(Tokens.AUDIENCE).subject("mallory").groups(Set.of("user", "ops"))
                .sign(generator.generateKeyPair().getPrivate());

        assertUnauthenticated(Api.as(forged).get("/orders/token"));
    }

    @Test
    void aTokenFromAnotherIssuerIsUnauthenticated() {
        assertUnauthenticated(Api.as(Tokens.fromIssuer("someone-else", Tokens.newUserId())).get("/orders/token"));
    }

    @Test
    void aTokenTheGatewaySignedForAnotherServiceIsUnauthenticated() {
        assertUnauthenticated(Api.as(Tokens.forAudience("ledger-service", Tokens.newUserId())).get("/orders/token"));
    }

    @Test
    void aTokenWithoutAnAudienceIsUnauthenticated() {
        assertUnauthenticated(Api.as(Tokens.withoutAudience(Tokens.newUserId())).get("/orders/token"));
    }

    @Test
    void anUnexpiredTokenOlderThanTheMaximumAgeIsUnauthenticated() {
        String userId = Tokens.newUserId();

        assertUnauthenticated(Api.as(Tokens.issuedAgo(Duration.ofHours(2), userId)).get("/orders/token"));
        assertEquals(200, Api.as(Tokens.issuedAgo(Duration.ofMinutes(50), userId)).get("/orders/token").statusCode());
    }

    @Test
    void garbageInTheAuthorizationHeaderIsUnauthenticated() {
        assertUnauthenticated(RestAssured.given().header("Authorization", "Bearer not.a.jwt").get("/orders/token"));
        assertUnauthenticated(RestAssured.given().header("Authorization", "Basic YWxpY2U6c2VjcmV0").get("/orders/token"));
    }

    @Test
    void aSubjectThatCannotBeAUserIdIsUnauthenticated() {
        assertUnauthenticated(Api.as(Tokens.user("x".repeat(65))).get("/orders/token"));
    }

    @Test
    void aUserCannotUseOpsEndpoints() {
        Response response = Api.as(Tokens.user(Tokens.newUserId()))
                .contentType("application/json")
                .body("{\"userId\":\"someone\",\"currency\":\"EUR\"}")
                .post("/accounts");

        assertEquals(403, response.statusCode());
        assertEquals("FORBIDDEN", response.jsonPath().getString("code"));
        assertEquals("application/problem+json", response.contentType());
    }

    @Test
    void opsCannotCreateOrdersInTheirOwnName() {
        assertEquals(403, Api.as(Tokens.ops()).get("/orders/token").statusCode());
    }

    @Test
    void aUserAskingForAnotherUsersOrderGetsNotFound() {
        long id = Api.newOrder(Tokens.user(Tokens.newUserId()), 300);

        Response response = Api.as(Tokens.user(Tokens.newUserId())).get("/orders/" + id);

        assertEquals(404, response.statusCode());
        assertEquals("ORDER_NOT_FOUND", response.jsonPath().getString("code"));
    }

    @Test
    void theOwnerAndOpsReadTheOrder() {
        String owner = Tokens.newUserId();
        long id = Api.newOrder(Tokens.user(owner), 300);

        Response own = Api.as(Tokens.user(owner)).get("/orders/" + id);
        Response byOps = Api.as(Tokens.ops()).get("/orders/" + id);

        assertEquals(200, own.statusCode());
        assertEquals(owner, own.jsonPath().getString("userId"));
        assertEquals(300, own.jsonPath().getLong("amount"));
        assertEquals(200, byOps.statusCode());
        assertEquals(own.asString(), byOps.asString());
    }

    private static void assertUnauthenticated(Response response) {
        assertEquals(401, response.statusCode(), response.asString());
        assertEquals("UNAUTHENTICATED", response.jsonPath().getString("code"));
        assertEquals("application/problem+json", response.contentType());
        assertEquals("Bearer", response.header("WWW-Authenticate"));
    }
}
