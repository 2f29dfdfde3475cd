package io.payonce.support;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.io.IOException;
import java.util.Map;

/**
 * A Redis server of the test's own, on a free port, for tests that pause or overload Redis: the
 * machine's shared Redis is never touched. It is ended by the process handle that started it.
 */
public class PrivateRedis implements QuarkusTestResourceLifecycleManager {

    private static volatile int port;

    private Process server;

    /** The port of the running private server, for commands the test sends it directly. */
    public static int port() {
        return port;
    }

    @Override
    public Map<String, String> start() {
        port = FreePorts.next();
        try {
            server = new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
                    "--save", "", "--appendonly", "no")
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                    .redirectError(ProcessBuilder.Redirect.DISCARD)
                    .start();
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        RedisCli.awaitPong(port);
        return Map.of("quarkus.redis.hosts", "redis://127.0.0.1:" + port);
    }

    @Override
    public void stop() {
        if (server != null) {
            server.destroy();
        }
    }

    public static String run(String... command) {
        return RedisCli.runOn(port, command);
    }
}
