package io.payonce.support;

import com.rabbitmq.client.ConnectionFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.util.Comparator;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A RabbitMQ node of the test's own: its own node name, ports and data directory, so that a test
 * can kill it and start it again (durable queues and persistent messages survive, as on a real
 * crash) while the machine's broker is never touched. It is ended through the handle of the process that started it.
 */
public final class PrivateRabbitMq implements AutoCloseable {

    private final Path base;
    private final String node;
    private final int port;
    private final int distributionPort;
    private Process launcher;

    private PrivateRabbitMq(Path base) {
        this.base = base;
        this.node = "payonce-test-" + UUID.randomUUID().toString().substring(0, 8) + "@localhost";
        this.port = FreePorts.next();
        this.distributionPort = FreePorts.next();
    }

    /** A new node, started and accepting connections. */
    public static PrivateRabbitMq start() throws IOException, InterruptedException {
        return startWith("");
    }

    /** A new node configured with {@code config}, lines of rabbitmq.conf such as {@code max_message_size = 2048}, started. */
    public static PrivateRabbitMq startWith(String config) throws IOException, InterruptedException {
        Path base = Files.createTempDirectory("payonce-rabbitmq-");
        Files.writeString(base.resolve("enabled_plugins"), "[].");
        Files.writeString(base.resolve("rabbitmq.conf"), config);
        PrivateRabbitMq broker = new PrivateRabbitMq(base);
        try {
            broker.boot();
        } catch (IOException | RuntimeException | InterruptedException failedToBoot) {
            broker.close();
            throw failedToBoot;
        }
        return broker;
    }

    public int port() {
        return port;
    }

    /**
     * Kills the node with SIGKILL, as a crash or an OOM kill would: nothing is flushed or closed. Only
     * processes this node's launcher started are killed (beam.smp and its wrappers), by their handles.
     */
    public void kill() throws InterruptedException {
        if (launcher == null) {
            return;
        }
        launcher.descendants().forEach(ProcessHandle::destroyForcibly);
        launcher.destroyForcibly();
        launcher.waitFor(30, TimeUnit.SECONDS);
    }

    /** A memory alarm: the broker stops reading from every connection that publishes, as when it runs out of memory. */
    public void blockPublishers() throws IOException, InterruptedException {
        control("set_vm_memory_high_watermark", "0");
    }

    public void unblockPublishers() throws IOException, InterruptedException {
        control("set_vm_memory_high_watermark", "0.4");
    }

    /** Starts the node again on the same data directory and ports. */
    public void restart() throws IOException, InterruptedException {
        boot();
    }

    private void control(String... arguments) throws IOException, InterruptedException {
        String[] command = Stream.concat(Stream.of("rabbitmqctl", "-q", "-n", node), Stream.of(arguments)).toArray(String[]::new);
        Process control = new ProcessBuilder(command).redirectErrorStream(true).start();
        String output = new String(control.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (control.waitFor() != 0) {
            throw new IllegalStateException("rabbitmqctl " + String.join(" ", arguments) + " failed: " + output);
        }
    }

    private void boot() throws IOException, InterruptedException {
        // Started as root, the server runs as the rabbitmq user, which must own its directory.
        if ("root".equals(System.getProperty("user.name"))) {
            UserPrincipal rabbitmq = base.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("rabbitmq");
            try (Stream<Path> paths = Files.walk(base)) {
                for (Path path : paths.toList()) {
                    Files.setOwner(path, rabbitmq);
                }
            }
        }
        ProcessBuilder builder = new ProcessBuilder("rabbitmq-server")
                .directory(base.toFile())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(base.resolve("server.out").toFile()));
        builder.environment().putAll(Map.of(
                "RABBITMQ_NODENAME", node,
                "RABBITMQ_NODE_IP_ADDRESS", "127.0.0.1",
                "RABBITMQ_NODE_PORT", Integer.toString(port),
                "RABBITMQ_DIST_PORT", Integer.toString(distributionPort),
                "RABBITMQ_BASE", base.toString(),
                "RABBITMQ_MNESIA_BASE", base.resolve("mnesia").toString(),
                "RABBITMQ_LOG_BASE", base.resolve("log").toString(),
                "RABBITMQ_CONFIG_FILE", base.resolve("rabbitmq").toString(),
                "RABBITMQ_ENABLED_PLUGINS_FILE", base.resolve("enabled_plugins").toString()));
        launcher = builder.start();
        try {
            awaitConnectable();
        } catch (RuntimeException | AssertionError failedToBoot) {
            kill();
            throw failedToBoot;
        }
    }

    private void awaitConnectable() {
        ConnectionFactory factory = new ConnectionFactory();
        factory.setHost("127.0.0.1");
        factory.setPort(port);
        Await.until(() -> connects(factory), Duration.ofSeconds(60), "RabbitMQ node " + node + " accepting connections");
    }

    private boolean connects(ConnectionFactory factory) {
        try {
            factory.newConnection().close();
            return true;
        } catch (Exception notYet) {
            if (!launcher.isAlive()) {
                throw new IllegalStateException("RabbitMQ node " + node + " ended while starting; see " + base.resolve("server.out"));
            }
            return false;
        }
    }

    @Override
    public void close() throws IOException, InterruptedException {
        kill();
        try (Stream<Path> paths = Files.walk(base)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
