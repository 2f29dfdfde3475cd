package io.payonce.support;

import io.smallrye.jwt.build.Jwt;
import io.smallrye.jwt.build.JwtClaimsBuilder;
import io.smallrye.jwt.util.KeyUtils;

import java.security.PrivateKey;
import java.time.Instant;
import java.util.Set;
import java.util.UUID;

/** Bearer tokens as the gateway would mint them, signed with the test key under src/test/resources/jwt. */
public final class Tokens {

    public static final String ISSUER = "payonce-gateway";
    public static final String AUDIENCE = "payonce";

    /** Read from the test classpath rather than from config, so that tests beside a packaged app sign the same way. */
    private static final PrivateKey SIGNING_KEY = signingKey();

    private Tokens() {
    }

    public static String user(String userId) {
        return sign(claims(userId, "user"));
    }

    public static String ops() {
        return ops("ops-" + UUID.randomUUID());
    }

    /** Ops staff whose subject the test knows, to find it where payonce records who did what. */
    public static String ops(String subject) {
        return sign(claims(subject, "ops"));
    }

    /** For load runs that outlast a token's default five minutes: valid for the hour the service accepts. */
    public static String lastingAnHour(String subject, String group) {
        return sign(claims(subject, group).expiresIn(3600));
    }

    /** A staff member who is also a customer: exactly what dev mode mints for ops. */
    public static String userAndOps(String userId) {
        return sign(Jwt.issuer(ISSUER).audience(AUDIENCE).subject(userId).groups(Set.of("user", "ops")));
    }

    /** Issued at {@code issuedAt}, expiring at {@code expiresAt}: for tests that keep a clock of their own. */
    public static String between(Instant issuedAt, Instant expiresAt, String userId) {
        return sign(claims(userId, "user").issuedAt(issuedAt).expiresAt(expiresAt));
    }

    /** A valid token made longer by a claim of {@code padding} characters. */
    public static String padded(int padding, String userId) {
        return sign(claims(userId, "user").claim("padding", "x".repeat(padding)));
    }

    public static String expired(String userId) {
        Instant past = Instant.now().minusSeconds(3600);
        return sign(claims(userId, "user").issuedAt(past.minusSeconds(60)).expiresAt(past));
    }

    public static String fromIssuer(String issuer, String userId) {
        return sign(Jwt.issuer(issuer).audience(AUDIENCE).subject(userId).groups(Set.of("user")));
    }

    public static String forAudience(String audience, String userId) {
        return sign(Jwt.issuer(ISSUER).audience(audience).subject(userId).groups(Set.of("user")));
    }

    public static String withoutAudience(String userId) {
        return sign(Jwt.issuer(ISSUER).subject(userId).groups(Set.of("user")));
    }

    /** Issued {@code age} ago and still unexpired: only the maximum token age can refuse it. */
    public static String issuedAgo(java.time.Duration age, String userId) {
        Instant issued = Instant.now().minus(age);
        return sign(claims(userId, "user").issuedAt(issued).expiresAt(Instant.now().plusSeconds(600)));
    }

    private static JwtClaimsBuilder claims(String subject, String group) {
        return Jwt.issuer(ISSUER).audience(AUDIENCE).subject(subject).groups(Set.of(group));
    }

    private static String sign(JwtClaimsBuilder claims) {
        return claims.jws().sign(SIGNING_KEY);
    }

    private static PrivateKey signingKey() {
        try {
            return KeyUtils.readPrivateKey("jwt/privateKey.pem");
        } catch (Exception e) {
            throw new IllegalStateException("The test signing key is missing from the test classpath", e);
        }
    }

    /** A fresh user id, so that every test owns its rows and never needs to truncate shared tables. */
    public static String newUserId() {
        return "u-" + UUID.randomUUID();
    }
}
