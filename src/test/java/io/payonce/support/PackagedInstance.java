package io.payonce.support;

import io.restassured.RestAssured;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * One instance of the packaged application, a process of its own that a test can pause, resume or
 * kill: the native executable when the build made one, the JVM jar otherwise, in the test profile.
 */
public final class PackagedInstance implements AutoCloseable {

    private final Process process;
    private final int port;

    private PackagedInstance(Process process, int port) {
        this.process = process;
        this.port = port;
    }

    /**
     * Starts an instance on {@code database} with {@code environment} added to the test's, and returns
     * once it is ready; {@code cleanDatabase} lets it drop and migrate the schema first.
     */
    public static PackagedInstance start(String name, String database, boolean cleanDatabase, Map<String, String> environment)
            throws IOException, InterruptedException {
        int port = FreePorts.next();
        int managementPort = FreePorts.next();
        Path nativeRunner = Path.of(System.getProperty("native.image.path", "target/none-runner"));
        boolean isNative = Files.isExecutable(nativeRunner);
        List<String> command = new ArrayList<>();
        command.add(isNative ? nativeRunner.toAbsolutePath().toString() : Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(List.of("-Dquarkus.profile=test", "-Dquarkus.http.port=" + port, "-D%test.quarkus.management.port=" + managementPort,
                "-D%test.quarkus.flyway.clean-at-start=" + cleanDatabase));
        if (!isNative) {
            command.addAll(List.of("-Xmx256m", "-jar", "target/quarkus-app/quarkus-run.jar"));
        }
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(Path.of("target", name + "-" + port + ".log").toFile());
        builder.environment().put("PAYONCE_TEST_DB_NAME", database);
        builder.environment().putAll(environment);
        PackagedInstance instance = new PackagedInstance(builder.start(), port);
        try {
            awaitReady(managementPort);
        } catch (IllegalStateException | InterruptedException neverReady) {
            instance.close();
            throw neverReady;
        }
        return instance;
    }

    public int port() {
        return port;
    }

    /** Sends the process a signal: STOP pauses it, CONT resumes it, KILL ends it without a word. */
    public void signal(String signal) throws IOException, InterruptedException {
        assertEquals(0, new ProcessBuilder("kill", "-" + signal, Long.toString(process.pid())).start().waitFor());
    }

    private static void awaitReady(int managementPort) throws InterruptedException {
        for (int i = 0; i < 300; i++) {
            try {
                if (RestAssured.given().port(managementPort).get("/q/health/ready").statusCode() == 200) {
                    return;
                }
            } catch (Exception notListeningYet) {
                // the instance is still starting
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("instance with management port " + managementPort + " never became ready");
    }

    @Override
    public void close() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }
}
