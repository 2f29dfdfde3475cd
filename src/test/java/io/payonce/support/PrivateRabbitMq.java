package io.payonce.support;

import com.rabbitmq.client.ConnectionFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.UserPrincipal;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Stream;

/**
 * A RabbitMQ node of the test's own: its own node name, ports, data directory and Erlang cookie, so
 * that a test can kill it, pause it and start it again (durable queues and persistent messages
 * survive, as on a real crash) while the machine's broker is never touched, nor joined (the node
 * registers its name with the machine's epmd, as every node there does). It is ended through the
 * handle of the process that started it. {@link PrivateRabbitMqCluster} joins three.
 */
public final class PrivateRabbitMq implements AutoCloseable {

    /** Erlang's net tick time on every private node: a peer that stops answering is down after 4 to 5 s. */
    static final int NET_TICK_SECONDS = 4;

    private final Path base;
    private final String node;
    private final String cookie;
    private final int port;
    private final int distributionPort;
    private Process launcher;

    private PrivateRabbitMq(Path base, String cookie) {
        this.base = base;
        this.node = "payonce-test-" + UUID.randomUUID().toString().substring(0, 8) + "@localhost";
        this.cookie = cookie;
        this.port = FreePorts.next();
        this.distributionPort = FreePorts.next();
    }

    /** A new node, started and accepting connections. */
    public static PrivateRabbitMq start() throws IOException, InterruptedException {
        return startWith("");
    }

    /** A new node configured with {@code config}, lines of rabbitmq.conf such as {@code max_message_size = 2048}, started. */
    public static PrivateRabbitMq startWith(String config) throws IOException, InterruptedException {
        PrivateRabbitMq broker = create(config, UUID.randomUUID().toString());
        try {
            broker.boot();
        } catch (IOException | RuntimeException | InterruptedException failedToBoot) {
            broker.close();
            throw failedToBoot;
        }
        return broker;
    }

    /** A node configured with {@code config}, not yet started, that knows the nodes sharing its {@code cookie}. */
    static PrivateRabbitMq create(String config, String cookie) throws IOException {
        Path base = Files.createTempDirectory("payonce-rabbitmq-");
        Files.writeString(base.resolve("enabled_plugins"), "[].");
        Files.writeString(base.resolve("rabbitmq.conf"), config);
        return new PrivateRabbitMq(base, cookie);
    }

    public int port() {
        return port;
    }

    /** Its Erlang node name, as the broker names it, e.g. as a queue's leader. */
    public String node() {
        return node;
    }

    /**
     * Kills the node with SIGKILL, as a crash or an OOM kill would: nothing is flushed or closed. Only
     * processes this node's launcher started are killed (beam.smp and its wrappers), by their handles.
     */
    public void kill() throws InterruptedException {
        if (launcher == null) {
            return;
        }
        List<ProcessHandle> processes = launcher.descendants().toList();
        processes.forEach(ProcessHandle::destroyForcibly);
        launcher.destroyForcibly();
        launcher.waitFor(30, TimeUnit.SECONDS);
        // The Erlang VM too, before a restart takes its ports, node name and data directory.
        for (ProcessHandle process : processes) {
            try {
                process.onExit().get(30, TimeUnit.SECONDS);
            } catch (ExecutionException | TimeoutException stillThere) {
                throw new IllegalStateException("process " + process.pid() + " of node " + node + " did not end", stillThere);
            }
        }
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

    /**
     * Stops the node's Erlang VM with SIGSTOP, as a long GC pause or a frozen VM would: its sockets
     * stay open and nothing answers. The other nodes of a cluster see it gone after the net tick time.
     */
    public void pause() throws IOException, InterruptedException {
        signalTheVm("STOP");
    }

    public void resume() throws IOException, InterruptedException {
        signalTheVm("CONT");
    }

    private void signalTheVm(String signal) throws IOException, InterruptedException {
        List<ProcessHandle> vms = launcher.descendants()
                .filter(process -> process.info().command().map(command -> command.endsWith("beam.smp")).orElse(false)).toList();
        if (vms.size() != 1) {
            throw new IllegalStateException("node " + node + " runs " + vms.size() + " Erlang VMs");
        }
        Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(vms.get(0).pid())).inheritIO().start();
        if (kill.waitFor() != 0) {
            throw new IllegalStateException("kill -" + signal + " of node " + node + " failed");
        }
    }

    /** What {@code rabbitmqctl} says, run against this node with {@code arguments}; it must succeed. */
    public String control(String... arguments) throws IOException, InterruptedException {
        String[] command = Stream.concat(Stream.of("rabbitmqctl", "-q", "--erlang-cookie", cookie, "-n", node), Stream.of(arguments))
                .toArray(String[]::new);
        Process control = new ProcessBuilder(command).redirectErrorStream(true).start();
        // Bounded: a paused node takes the CLI's connection and never answers. Its output is small enough for the pipe.
        if (!control.waitFor(30, TimeUnit.SECONDS)) {
            control.destroyForcibly();
            throw new IllegalStateException("rabbitmqctl " + String.join(" ", arguments) + " on " + node + " did not end within 30 s");
        }
        String output = new String(control.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (control.exitValue() != 0) {
            throw new IllegalStateException("rabbitmqctl " + String.join(" ", arguments) + " on " + node + " failed: " + output);
        }
        return output;
    }

    /** Launches the node; it accepts connections once {@link #awaitConnectable} returns. */
    void launch() throws IOException {
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
                "RABBITMQ_ENABLED_PLUGINS_FILE", base.resolve("enabled_plugins").toString(),
                // Its own cookie, given on the command line: the launcher runs the server as the rabbitmq user, whose
                // home holds the machine's broker's. A short net tick time finds a paused peer in seconds, not a minute.
                "RABBITMQ_SERVER_ADDITIONAL_ERL_ARGS", "-setcookie " + cookie + " -kernel net_ticktime " + NET_TICK_SECONDS));
        launcher = builder.start();
    }

    private void boot() throws IOException, InterruptedException {
        launch();
        try {
            awaitConnectable();
        } catch (RuntimeException | AssertionError failedToBoot) {
            kill();
            throw failedToBoot;
        }
    }

    void awaitConnectable() {
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

    /** Ends the node, keeps its logs in target/rabbitmq-logs (a failed test's evidence), and deletes its data. */
    @Override
    public void close() throws IOException, InterruptedException {
        kill();
        Path kept = Files.createDirectories(Path.of("target", "rabbitmq-logs", node));
        try (Stream<Path> logs = Files.list(base.resolve("log"))) {
            for (Path log : logs.toList()) {
                Files.copy(log, kept.resolve(log.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
        } catch (NoSuchFileException neverStarted) {
            // no log to keep
        }
        try (Stream<Path> paths = Files.walk(base)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
