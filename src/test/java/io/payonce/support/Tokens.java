package io.payonce.support;

import io.smallrye.jwt.build.Jwt;

import java.time.Instant;
import java.util.Set;
import java.util.UUID;

/** Bearer tokens as the gateway would mint them, signed with the test key under src/test/resources/jwt. */
public final class Tokens {

    public static final String ISSUER = "payonce-gateway";

    private Tokens() {
    }

    public static String user(String userId) {
        return Jwt.issuer(ISSUER).subject(userId).groups(Set.of("user")).sign();
    }

    public static String ops() {
        return Jwt.issuer(ISSUER).subject("ops-" + UUID.randomUUID()).groups(Set.of("ops")).sign();
    }

    public static String expired(String userId) {
        Instant past = Instant.now().minusSeconds(3600);
        return Jwt.issuer(ISSUER).subject(userId).groups(Set.of("user")).issuedAt(past.minusSeconds(60)).expiresAt(past).sign();
    }

    public static String fromIssuer(String issuer, String userId) {
        return Jwt.issuer(issuer).subject(userId).groups(Set.of("user")).sign();
    }

    /** A fresh user id, so that every test owns its rows and never needs to truncate shared tables. */
    public static String newUserId() {
        return "u-" + UUID.randomUUID();
    }
}
