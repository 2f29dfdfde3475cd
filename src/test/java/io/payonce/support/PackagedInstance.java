package io.payonce.support;

import io.restassured.RestAssured;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * One instance of the packaged application, a process of its own that a test can pause, resume or
 * kill: the native executable when the build made one, the JVM jar otherwise, in the test profile.
 */
public final class PackagedInstance implements AutoCloseable {

    /** The manifest's readinessProbe timeout: a probe not answered by then has failed (KubernetesManifestIT reads it there). */
    public static final Duration PROBE_TIMEOUT = Duration.ofSeconds(10);
    /** HTTP/1.1, as the kubelet's probes speak it. */
    private static final HttpClient PROBES = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(PROBE_TIMEOUT).build();

    private final Process process;
    private final int port;
    private final int managementPort;
    private final Path log;

    private PackagedInstance(Process process, int port, int managementPort, Path log) {
        this.process = process;
        this.port = port;
        this.managementPort = managementPort;
        this.log = log;
    }

    /**
     * Starts an instance on {@code database} with {@code environment} added to the test's, and returns
     * once it is ready; {@code cleanDatabase} lets it drop and migrate the schema first.
     */
    public static PackagedInstance start(String name, String database, boolean cleanDatabase, Map<String, String> environment)
            throws IOException, InterruptedException {
        return startOn(FreePorts.next(), name, database, cleanDatabase, environment);
    }

    /** The same, listening on {@code port}: an instance that takes the place of one killed, at its address. */
    public static PackagedInstance startOn(int port, String name, String database, boolean cleanDatabase, Map<String, String> environment)
            throws IOException, InterruptedException {
        int managementPort = FreePorts.next();
        List<String> command = command(List.of("-Dquarkus.profile=test", "-Dquarkus.http.port=" + port,
                "-D%test.quarkus.management.port=" + managementPort, "-D%test.quarkus.flyway.clean-at-start=" + cleanDatabase), "-Xmx256m");
        Path log = Path.of("target", name + "-" + port + ".log");
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.environment().put("PAYONCE_TEST_DB_NAME", database);
        builder.environment().putAll(environment);
        PackagedInstance instance = new PackagedInstance(builder.start(), port, managementPort, log);
        try {
            instance.awaitReady();
        } catch (RuntimeException | AssertionError neverReady) {
            instance.close();
            throw neverReady;
        }
        return instance;
    }

    /**
     * The command that runs the packaged application with {@code properties} (-D...): the native
     * executable when the build made one, else the JVM jar, with {@code jvmOptions} for the JVM only.
     */
    public static List<String> command(List<String> properties, String... jvmOptions) {
        Path nativeRunner = Path.of(System.getProperty("native.image.path", "target/none-runner"));
        List<String> command = new ArrayList<>();
        if (Files.isExecutable(nativeRunner)) {
            command.add(nativeRunner.toAbsolutePath().toString());
            command.addAll(properties);
        } else {
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.addAll(properties);
            command.addAll(List.of(jvmOptions));
            command.addAll(List.of("-jar", "target/quarkus-app/quarkus-run.jar"));
        }
        return command;
    }

    public int port() {
        return port;
    }

    /** The port of its health checks and metrics. */
    public int managementPort() {
        return managementPort;
    }

    /** The instance's metrics in Prometheus's text, from its management port: another process, read over HTTP. */
    public String metrics() {
        return RestAssured.given().port(managementPort).get("/q/metrics").asString();
    }

    /** Where the instance's console output goes. */
    public Path log() {
        return log;
    }

    /** How many lines of its log so far contain {@code text}. */
    public long linesContaining(String text) {
        try {
            return Files.readString(log).lines().filter(line -> line.contains(text)).count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Sends the process a signal: STOP pauses it, CONT resumes it, KILL ends it without a word. */
    public void signal(String signal) throws IOException, InterruptedException {
        assertEquals(0, new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).start().waitFor());
    }

    /**
     * Pauses the process with SIGSTOP and returns once none of its threads can run: each stopped
     * ('T' in its /proc stat) or gone. kill returns once the signal is sent, and a thread still
     * running could still commit.
     */
    public void pause() throws IOException, InterruptedException {
        signal("STOP");
        Path threads = Path.of("/proc", Long.toString(process.pid()), "task");
        Await.until(() -> {
            try (Stream<Path> each = Files.list(threads)) {
                return each.map(PackagedInstance::state).allMatch(state -> state == 'T' || state == 'Z' || state == 'X');
            }
        }, Duration.ofSeconds(10), "every thread of instance " + process.pid() + " stopped");
    }

    /** A thread's state, the letter after its name in parentheses (a name may hold spaces); 'X', dead, for one gone meanwhile. */
    private static char state(Path thread) {
        try {
            String stat = Files.readString(thread.resolve("stat"));
            return stat.charAt(stat.lastIndexOf(')') + 2);
        } catch (IOException gone) {
            return 'X';
        }
    }

    /**
     * Returns once the instance is ready, or fails at once if it ended; a failure ends with what it
     * logged last, since its log is gone with a CI run's checkout.
     */
    private void awaitReady() {
        try {
            Await.until(() -> {
                if (!process.isAlive()) {
                    throw new AssertionError("the instance with management port " + managementPort + " ended with exit code "
                            + process.exitValue() + " before it was ready");
                }
                return readiness() == 200;
            }, Duration.ofSeconds(30), "the instance with management port " + managementPort + " ready");
        } catch (AssertionError notReady) {
            throw new AssertionError(notReady.getMessage() + "; it logged last:\n" + lastLinesOfLog(12), notReady);
        }
    }

    private String lastLinesOfLog(int count) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - count), lines.size()));
        } catch (IOException unreadable) {
            return "(its log " + log + " could not be read: " + unreadable.getMessage() + ")";
        }
    }

    /**
     * The readiness check's status now, as the kubelet's probe sees it: 0 when the instance does not
     * listen, or does not answer within {@link #PROBE_TIMEOUT}.
     */
    public int readiness() {
        HttpRequest probe = HttpRequest.newBuilder(URI.create("http://localhost:" + managementPort + "/q/health/ready"))
                .timeout(PROBE_TIMEOUT).build();
        try {
            return PROBES.send(probe, HttpResponse.BodyHandlers.discarding()).statusCode();
        } catch (IOException noAnswer) {
            return 0;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return 0;
        }
    }

    @Override
    public void close() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }
}
