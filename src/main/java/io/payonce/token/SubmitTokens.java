package io.payonce.token;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.config.PayonceConfig;
import io.payonce.redis.CallBound;
import io.payonce.redis.LuaScript;
import io.quarkus.redis.datasource.ReactiveRedisDataSource;
import io.quarkus.redis.datasource.value.ReactiveValueCommands;
import io.quarkus.redis.datasource.value.SetArgs;
import io.smallrye.mutiny.Uni;
import io.vertx.core.http.ConnectionPoolTooBusyException;
import jakarta.enterprise.context.ApplicationScoped;
import org.eclipse.microprofile.faulttolerance.CircuitBreaker;

import java.security.SecureRandom;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.Base64;
import java.util.List;
import java.util.regex.Pattern;

/**
 * One-time submit tokens: {@code GET /orders/token} issues one per form, {@code POST /orders}
 * consumes it. Consuming is one Lua script (owner check and delete together), never a read
 * followed by a delete, so that a double-click cannot create two orders. Redis calls have a short
 * timeout and a circuit breaker: without Redis, order forms answer 503 quickly. A busy local
 * connection pool is this instance's own queue, not Redis failing, so it never opens the breaker.
 */
@ApplicationScoped
public class SubmitTokens {

    private static final Pattern SHAPE = Pattern.compile("[A-Za-z0-9_-]{1,64}");
    private static final int TOKEN_BYTES = 32;
    private static final Duration CALL_BOUND = Duration.ofMillis(500);

    private final ReactiveRedisDataSource redis;
    private final ReactiveValueCommands<String, String> values;
    private final PayonceConfig config;
    private final SecureRandom random = new SecureRandom();
    private final LuaScript consumeScript = LuaScript.load("consume-submit-token.lua");

    public SubmitTokens(ReactiveRedisDataSource redis, PayonceConfig config) {
        this.redis = redis;
        this.values = redis.value(String.class);
        this.config = config;
    }

    @CircuitBreaker(requestVolumeThreshold = 10, failureRatio = 0.5, delay = 2, delayUnit = ChronoUnit.SECONDS, successThreshold = 2,
            skipOn = ConnectionPoolTooBusyException.class)
    public Uni<String> issue(String userId) {
        byte[] bytes = new byte[TOKEN_BYTES];
        random.nextBytes(bytes);
        String token = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
        return CallBound.within(CALL_BOUND, values.set(tokenKey(token), userId, new SetArgs().px(config.submitToken().ttl()))
                .replaceWith(token));
    }

    @CircuitBreaker(requestVolumeThreshold = 10, failureRatio = 0.5, delay = 2, delayUnit = ChronoUnit.SECONDS, successThreshold = 2,
            skipOn = ConnectionPoolTooBusyException.class)
    public Uni<Consumption> consume(String token, String userId) {
        return CallBound.within(CALL_BOUND, consumeScript.run(redis, keys(token), userId, ttlMillis())
                .map(answer -> switch (answer.toInteger()) {
                    case 1 -> Consumption.CONSUMED;
                    case 2 -> Consumption.CONSUMED_BEFORE;
                    default -> Consumption.UNKNOWN;
                }));
    }

    /** Rejects a header value that cannot be a token before it reaches Redis. */
    public static String requireWellFormed(String token) {
        if (token == null || token.isEmpty()) {
            throw new ApiException(ErrorCode.SUBMIT_TOKEN_MISSING);
        }
        if (!SHAPE.matcher(token).matches()) {
            throw new ApiException(ErrorCode.SUBMIT_TOKEN_MALFORMED);
        }
        return token;
    }

    private String ttlMillis() {
        return Long.toString(config.submitToken().ttl().toMillis());
    }

    /** The hash tag keeps a token and its marker in one Redis Cluster slot, as the scripts need. */
    private static List<String> keys(String token) {
        return List.of(tokenKey(token), "payonce:token:{" + token + "}:consumed");
    }

    private static String tokenKey(String token) {
        return "payonce:token:{" + token + "}";
    }
}
