package io.payonce.auth;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import io.payonce.config.PayonceConfig;
import io.smallrye.jwt.auth.principal.DefaultJWTParser;
import io.smallrye.jwt.auth.principal.JWTAuthContextInfo;
import io.smallrye.jwt.auth.principal.JWTParser;
import io.smallrye.jwt.auth.principal.ParseException;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.Alternative;
import jakarta.inject.Inject;
import jakarta.json.JsonNumber;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.eclipse.microprofile.jwt.Claims;
import org.eclipse.microprofile.jwt.JsonWebToken;

import javax.crypto.SecretKey;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;

/**
 * The bearer-token check with a memory: a token that passed smallrye-jwt's verification (signature,
 * issuer, audience, expiry, age) is remembered, keyed by its exact text, so that the next requests
 * carrying it skip the RSA signature check, the largest single cost of a request. A remembered token
 * is used only until the earliest of its {@code exp}, its {@code iat} plus the maximum token age,
 * and the configured longest stay; past that it is verified afresh, so a cached answer never accepts
 * a token the verifier would refuse. Only tokens that passed are remembered: a forged, expired or
 * malformed one is checked (and refused) on every request. The cache is bounded in entries, and a
 * token longer than a typical one is not kept at all.
 */
@Alternative
@Priority(1)
@ApplicationScoped
public class VerifiedTokens implements JWTParser {

    /** Gateway tokens are well under this; a longer one is verified every time rather than held. */
    static final int LONGEST_REMEMBERED = 4096;

    private final DefaultJWTParser verifier;
    private final Cache<String, Verified> remembered;
    private final long maxStaySeconds;
    private final Optional<Long> maxAgeSeconds;
    private final Clock clock;

    @Inject
    VerifiedTokens(DefaultJWTParser verifier, PayonceConfig config,
                   @ConfigProperty(name = "mp.jwt.verify.token.age") Optional<Long> maxAgeSeconds) {
        this(verifier, config.verifiedTokens().maxEntries(), config.verifiedTokens().maxStay().toSeconds(), maxAgeSeconds,
                Clock.systemUTC());
    }

    VerifiedTokens(DefaultJWTParser verifier, int maxEntries, long maxStaySeconds, Optional<Long> maxAgeSeconds, Clock clock) {
        this.verifier = verifier;
        // Nothing outlives the longest stay, so the memory drains when traffic stops; maintenance
        // (eviction) runs on the calling thread: no pool of its own, and the bound holds at once.
        this.remembered = Caffeine.newBuilder()
                .maximumSize(maxEntries)
                .expireAfterWrite(Duration.ofSeconds(maxStaySeconds))
                .executor(Runnable::run)
                .build();
        this.maxStaySeconds = maxStaySeconds;
        this.maxAgeSeconds = maxAgeSeconds;
        this.clock = clock;
    }

    @Override
    public JsonWebToken parse(String token) throws ParseException {
        long now = clock.instant().getEpochSecond();
        Verified known = remembered.getIfPresent(token);
        if (known != null && now < known.usableUntil()) {
            return known.token();
        }
        JsonWebToken verified = verifier.parse(token);
        if (token.length() <= LONGEST_REMEMBERED) {
            usableUntil(verified, now).ifPresent(until -> remembered.put(token, new Verified(verified, until)));
        }
        return verified;
    }

    /**
     * The first second at which the verifier might refuse the token. None when the token names no
     * expiry, or no issue time while a maximum age applies: such a token is not kept.
     */
    private Optional<Long> usableUntil(JsonWebToken token, long now) {
        Optional<Long> expiry = seconds(token, Claims.exp);
        if (expiry.isEmpty()) {
            return Optional.empty();
        }
        long until = Math.min(expiry.get(), now + maxStaySeconds);
        if (maxAgeSeconds.isEmpty()) {
            return Optional.of(until);
        }
        return seconds(token, Claims.iat).map(issuedAt -> Math.min(until, issuedAt + maxAgeSeconds.get()));
    }

    private static Optional<Long> seconds(JsonWebToken token, Claims claim) {
        Object value = token.getClaim(claim.name());
        if (value instanceof Number number) {
            return Optional.of(number.longValue());
        }
        if (value instanceof JsonNumber number) {
            return Optional.of(number.longValue());
        }
        return Optional.empty();
    }

    @Override
    public JsonWebToken parse(String token, JWTAuthContextInfo context) throws ParseException {
        return verifier.parse(token, context);
    }

    @Override
    public JsonWebToken verify(String token, PublicKey key) throws ParseException {
        return verifier.verify(token, key);
    }

    @Override
    public JsonWebToken verify(String token, SecretKey key) throws ParseException {
        return verifier.verify(token, key);
    }

    @Override
    public JsonWebToken verify(String token, String secret) throws ParseException {
        return verifier.verify(token, secret);
    }

    @Override
    public JsonWebToken decrypt(String token, PrivateKey key) throws ParseException {
        return verifier.decrypt(token, key);
    }

    @Override
    public JsonWebToken decrypt(String token, SecretKey key) throws ParseException {
        return verifier.decrypt(token, key);
    }

    @Override
    public JsonWebToken decrypt(String token, String secret) throws ParseException {
        return verifier.decrypt(token, secret);
    }

    @Override
    public JsonWebToken parseOnly(String token) throws ParseException {
        return verifier.parseOnly(token);
    }

    private record Verified(JsonWebToken token, long usableUntil) {
    }
}
