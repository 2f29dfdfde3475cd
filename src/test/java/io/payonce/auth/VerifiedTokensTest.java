package io.payonce.auth;

import io.payonce.support.MovableClock;
import io.payonce.support.Tokens;
import io.smallrye.jwt.auth.principal.DefaultJWTParser;
import io.smallrye.jwt.auth.principal.JWTAuthContextInfo;
import io.smallrye.jwt.auth.principal.ParseException;
import io.smallrye.jwt.util.KeyUtils;
import org.eclipse.microprofile.jwt.JsonWebToken;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The cache in front of the token verifier: what it may answer by itself, and for how long. Each
 * test counts the verifier's calls; a clock of the test's own moves time past each bound.
 */
class VerifiedTokensTest {

    private static final long MAX_AGE_SECONDS = 3600;

    private final CountingVerifier verifier = new CountingVerifier();
    private final MovableClock clock = new MovableClock();
    private final VerifiedTokens tokens = new VerifiedTokens(verifier, 100, 60, Optional.of(MAX_AGE_SECONDS), clock);

    @Test
    void aVerifiedTokenIsVerifiedOnceWithinItsStay() throws Exception {
        String token = tokenExpiringIn(300);

        JsonWebToken first = tokens.parse(token);
        clock.advance(59);
        JsonWebToken again = tokens.parse(token);

        assertEquals(1, verifier.calls);
        assertEquals(first.getSubject(), again.getSubject());
    }

    @Test
    void afterTheLongestStayTheTokenIsVerifiedAfresh() throws Exception {
        String token = tokenExpiringIn(300);

        tokens.parse(token);
        clock.advance(60);
        tokens.parse(token);

        assertEquals(2, verifier.calls);
    }

    @Test
    void neverAnsweredFromMemoryAtOrPastItsExpiry() throws Exception {
        String token = tokenExpiringIn(10);

        tokens.parse(token);
        clock.advance(9);
        tokens.parse(token);
        assertEquals(1, verifier.calls);

        clock.advance(1);
        tokens.parse(token);
        assertEquals(2, verifier.calls);
    }

    @Test
    void neverAnsweredFromMemoryPastItsMaximumAge() throws Exception {
        String token = Tokens.between(clock.instant().minusSeconds(MAX_AGE_SECONDS - 5), clock.instant().plusSeconds(600),
                Tokens.newUserId());

        tokens.parse(token);
        clock.advance(4);
        tokens.parse(token);
        assertEquals(1, verifier.calls);

        clock.advance(1);
        tokens.parse(token);
        assertEquals(2, verifier.calls);
    }

    @Test
    void aRefusedTokenIsNeverRemembered() {
        String expired = Tokens.expired(Tokens.newUserId());

        assertThrows(ParseException.class, () -> tokens.parse(expired));
        assertThrows(ParseException.class, () -> tokens.parse(expired));

        assertEquals(2, verifier.calls);
    }

    @Test
    void aRememberedTokenWithOneCharacterChangedIsVerifiedAndRefused() throws Exception {
        String token = Tokens.user(Tokens.newUserId());
        tokens.parse(token);
        int changed = token.length() - 5;
        String tampered = token.substring(0, changed) + (token.charAt(changed) == 'A' ? 'B' : 'A') + token.substring(changed + 1);

        assertThrows(ParseException.class, () -> tokens.parse(tampered));
        assertEquals(2, verifier.calls);
    }

    @Test
    void aTokenLongerThanTheLongestRememberedIsVerifiedEveryTime() throws Exception {
        String token = Tokens.padded(VerifiedTokens.LONGEST_REMEMBERED, Tokens.newUserId());

        tokens.parse(token);
        tokens.parse(token);

        assertEquals(2, verifier.calls);
    }

    @Test
    void noEntriesMeansEveryTokenIsVerifiedEveryTime() throws Exception {
        VerifiedTokens none = new VerifiedTokens(verifier, 0, 60, Optional.of(MAX_AGE_SECONDS), clock);
        String token = Tokens.user(Tokens.newUserId());

        none.parse(token);
        none.parse(token);

        assertEquals(2, verifier.calls);
    }

    @Test
    void aFullCacheKeepsItsBound() throws Exception {
        VerifiedTokens small = new VerifiedTokens(verifier, 2, 60, Optional.of(MAX_AGE_SECONDS), clock);
        List<String> many = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            many.add(Tokens.user(Tokens.newUserId()));
            small.parse(many.get(i));
        }
        for (String token : many) {
            small.parse(token);
        }

        // At most the two tokens it held when the second pass began are answered from memory.
        assertTrue(verifier.calls >= 50 + 48, "verifications: " + verifier.calls);
    }

    /** A token the test's clock sees issued now; the verifier, on the wall clock, accepts it as well. */
    private String tokenExpiringIn(long seconds) {
        return Tokens.between(clock.instant(), clock.instant().plusSeconds(seconds), Tokens.newUserId());
    }

    /** smallrye-jwt's own verifier with the test key, counting the tokens it is asked to verify. */
    private static final class CountingVerifier extends DefaultJWTParser {

        int calls;

        CountingVerifier() {
            super(context());
        }

        @Override
        public JsonWebToken parse(String token) throws ParseException {
            calls++;
            return super.parse(token);
        }

        private static JWTAuthContextInfo context() {
            try {
                JWTAuthContextInfo context = new JWTAuthContextInfo(KeyUtils.readPublicKey("jwt/publicKey.pem"), Tokens.ISSUER);
                context.setExpectedAudience(Set.of(Tokens.AUDIENCE));
                return context;
            } catch (Exception e) {
                throw new IllegalStateException("The test public key is missing from the test classpath", e);
            }
        }
    }
}
