package io.payonce.redis;

import io.payonce.digest.HexDigest;
import io.quarkus.redis.datasource.ReactiveRedisDataSource;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.redis.client.Response;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.stream.Stream;

/**
 * A Lua script from {@code src/main/resources/lua}, run atomically by Redis. Sent by digest
 * (EVALSHA) and, when Redis has forgotten it (a restart empties the script cache), once in full.
 */
public final class LuaScript {

    private final String source;
    private final String sha1;

    private LuaScript(String source) {
        this.source = source;
        this.sha1 = HexDigest.sha1(source);
    }

    /** Reads the script at class-loading time of its user, never on a request path. */
    public static LuaScript load(String name) {
        String path = "lua/" + name;
        try (InputStream in = LuaScript.class.getClassLoader().getResourceAsStream(path)) {
            if (in == null) {
                throw new IllegalStateException("Missing Lua script " + path);
            }
            return new LuaScript(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public Uni<Response> run(ReactiveRedisDataSource redis, List<String> keys, String... args) {
        return redis.execute("EVALSHA", arguments(sha1, keys, args))
                .onFailure(LuaScript::isNoScript)
                .recoverWithUni(() -> redis.execute("EVAL", arguments(source, keys, args)));
    }

    private static String[] arguments(String script, List<String> keys, String... args) {
        return Stream.of(Stream.of(script, Integer.toString(keys.size())), keys.stream(), Stream.of(args))
                .flatMap(s -> s)
                .toArray(String[]::new);
    }

    private static boolean isNoScript(Throwable failure) {
        return failure.getMessage() != null && failure.getMessage().startsWith("NOSCRIPT");
    }
}
