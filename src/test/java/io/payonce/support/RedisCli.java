package io.payonce.support;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Redis commands from a test, through {@code redis-cli}, so that they work the same beside an
 * in-process app and beside the packaged one: to put a key in a state the API reaches only by
 * crashing between two steps.
 */
public final class RedisCli {

    private RedisCli() {
    }

    /**
     * A command to the Redis payonce's tests share, or, while a test runs payonce on a Redis Cluster
     * of its own ({@link PrivateRedisCluster}), to that cluster: the same test then reaches the same keys.
     */
    public static String run(String... command) {
        if (PrivateRedisCluster.running()) {
            return PrivateRedisCluster.run(command);
        }
        return send(System.getenv().getOrDefault("PAYONCE_REDIS_HOST", "127.0.0.1"),
                System.getenv().getOrDefault("PAYONCE_REDIS_PORT", "6379"), command);
    }

    /** The key of an order's pay lock, as io.payonce.lock.PayLock names it; its value is the holder's owner id. */
    public static String payLockKey(long orderId) {
        return "payonce:lock:{order:" + orderId + "}";
    }

    /** A command to a Redis a test started itself on loopback. */
    public static String runOn(int port, String... command) {
        return send("127.0.0.1", Integer.toString(port), command);
    }

    /** Waits until the Redis a test started on {@code port} answers PING, for at most 5 s. */
    public static void awaitPong(int port) {
        Await.until(() -> pongs(port), Duration.ofSeconds(5), "Redis on port " + port + " answering PING");
    }

    private static boolean pongs(int port) {
        try {
            return "PONG".equals(runOn(port, "PING"));
        } catch (IllegalStateException notYet) {
            // the server is still starting
            return false;
        }
    }

    private static String send(String host, String port, String... command) {
        List<String> line = new ArrayList<>(List.of("redis-cli", "-h", host, "-p", port));
        line.addAll(List.of(command));
        try {
            Process process = new ProcessBuilder(line).redirectErrorStream(true).start();
            String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (process.waitFor() != 0) {
                throw new IllegalStateException("redis-cli failed: " + output);
            }
            return output;
        } catch (IOException e) {
            throw new IllegalStateException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
