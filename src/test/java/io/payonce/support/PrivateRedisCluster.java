package io.payonce.support;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * A Redis Cluster of the test's own: three masters on free loopback ports, each with its own data
 * directory, joined with {@code redis-cli --cluster create}. payonce talks to it as a cluster client
 * ({@code quarkus.redis.client-type=cluster}). The servers are ended by the process handles that
 * started them; the machine's shared Redis is never touched.
 */
public class PrivateRedisCluster implements QuarkusTestResourceLifecycleManager {

    private static final int MASTERS = 3;

    private static volatile List<Integer> ports = List.of();

    private final List<Process> servers = new ArrayList<>();
    private Path directory;

    /** Whether payonce runs on this cluster now: from the start of its test profile to the end. */
    public static boolean running() {
        return !ports.isEmpty();
    }

    /** A command to the cluster, following its redirects to the node that holds the key. */
    public static String run(String... command) {
        List<String> line = new ArrayList<>(List.of("-c"));
        line.addAll(List.of(command));
        return RedisCli.runOn(ports.get(0), line.toArray(String[]::new));
    }

    @Override
    public Map<String, String> start() {
        List<Integer> started = new ArrayList<>();
        try {
            directory = Files.createTempDirectory("payonce-redis-cluster");
            for (int i = 0; i < MASTERS; i++) {
                int port = FreePorts.next();
                // Named, not left to Redis's port + 10000: that lands in the kernel's ephemeral range, where
                // a client socket can hold it, and the node then ends at its start (seen once on a fresh machine).
                int busPort = FreePorts.next();
                Path node = Files.createDirectory(directory.resolve(Integer.toString(port)));
                servers.add(new ProcessBuilder("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1",
                        "--cluster-enabled", "yes", "--cluster-port", Integer.toString(busPort),
                        "--cluster-config-file", node.resolve("nodes.conf").toString(),
                        "--dir", node.toString(), "--save", "", "--appendonly", "no")
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                        .redirectError(ProcessBuilder.Redirect.DISCARD)
                        .start());
                started.add(port);
            }
            started.forEach(RedisCli::awaitPong);
            create(started);
            awaitClusterOk(started);
        } catch (IOException | RuntimeException | AssertionError e) {
            stop();
            throw new IllegalStateException("the Redis Cluster did not start", e);
        }
        // Published only once the cluster serves: until then RedisCli keeps to the shared Redis.
        ports = List.copyOf(started);
        return Map.of(
                "quarkus.redis.client-type", "cluster",
                "quarkus.redis.hosts", ports.stream().map(port -> "redis://127.0.0.1:" + port).collect(Collectors.joining(",")));
    }

    @Override
    public void stop() {
        ports = List.of();
        for (Process server : servers) {
            server.destroy();
            waitFor(server);
        }
        servers.clear();
        if (directory != null) {
            try (var files = Files.walk(directory)) {
                files.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    private static void create(List<Integer> nodes) throws IOException {
        List<String> command = new ArrayList<>(List.of("redis-cli", "--cluster", "create"));
        nodes.forEach(port -> command.add("127.0.0.1:" + port));
        command.addAll(List.of("--cluster-replicas", "0", "--cluster-yes"));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (waitFor(process) != 0 || !output.contains("All 16384 slots covered")) {
            throw new IllegalStateException("redis-cli --cluster create failed: " + output);
        }
    }

    private static void awaitClusterOk(List<Integer> nodes) {
        Await.until(() -> nodes.stream().allMatch(port -> RedisCli.runOn(port, "CLUSTER", "INFO").contains("cluster_state:ok")),
                Duration.ofSeconds(10), "the Redis Cluster at cluster_state:ok");
    }

    private static int waitFor(Process process) {
        try {
            return process.waitFor();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
