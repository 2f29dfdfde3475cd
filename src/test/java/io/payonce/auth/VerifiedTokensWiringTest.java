package io.payonce.auth;

import io.quarkus.test.junit.QuarkusTest;
import io.smallrye.jwt.auth.principal.JWTParser;
import jakarta.inject.Inject;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;

/** smallrye-jwt's token check reaches the verifier through the cache of verified tokens, not around it. */
@QuarkusTest
class VerifiedTokensWiringTest {

    @Inject
    JWTParser parser;

    @Test
    void bearerTokensAreCheckedThroughTheCacheOfVerifiedTokens() {
        assertInstanceOf(VerifiedTokens.class, parser);
    }
}
