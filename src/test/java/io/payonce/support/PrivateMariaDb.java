package io.payonce.support;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A mariadbd of the test's own, for tests that kill the database or start it with settings of their
 * own: its own data directory under /tmp, a free port, and the process that runs it, ended by its own
 * handle. The machine's shared MariaDB is never touched.
 */
public final class PrivateMariaDb implements AutoCloseable {

    private static final String USER = System.getProperty("user.name");
    private static final Duration READY = Duration.ofSeconds(60);

    private final Path directory;
    private final List<String> options;
    private final int port = FreePorts.next();
    private Process process;

    private PrivateMariaDb(Path directory, List<String> options) {
        this.directory = directory;
        this.options = options;
    }

    /** A new server started with {@code options} (mariadbd's own, such as --log-bin) and {@code environment} added to the test's. */
    public static PrivateMariaDb start(List<String> options, Map<String, String> environment) throws IOException, InterruptedException {
        PrivateMariaDb server = new PrivateMariaDb(Files.createTempDirectory(Path.of("/tmp"), "payonce-mariadb-"), options);
        try {
            server.install();
            server.launch(environment);
            return server;
        } catch (IOException | InterruptedException | RuntimeException | AssertionError failed) {
            server.close();
            throw failed;
        }
    }

    public Connection connect() throws SQLException {
        return DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + port + "/?user=root&connectTimeout=1000&socketTimeout=60000");
    }

    /** SIGKILL, as a crash: nothing flushed that was not flushed already. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    /** Starts the server again on its data directory, with its options and {@code environment}, as after a crash. */
    public void restart(Map<String, String> environment) throws IOException {
        launch(environment);
    }

    private void install() throws IOException, InterruptedException {
        installSystemTables(directory.resolve("data"), directory.resolve("install.log"));
    }

    /** MariaDB's system tables in {@code data}, root without a password, as every private server of the tests starts from. */
    static void installSystemTables(Path data, Path log) throws IOException, InterruptedException {
        Process install = new ProcessBuilder("mariadb-install-db", "--no-defaults", "--datadir=" + data,
                "--auth-root-authentication-method=normal", "--skip-test-db", "--user=" + USER)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        if (!install.waitFor(60, TimeUnit.SECONDS) || install.exitValue() != 0) {
            install.destroyForcibly();
            throw new IllegalStateException("mariadb-install-db failed; see " + log);
        }
    }

    private void launch(Map<String, String> environment) throws IOException {
        List<String> command = new ArrayList<>(List.of("mariadbd", "--no-defaults", "--datadir=" + directory.resolve("data"),
                "--port=" + port, "--bind-address=127.0.0.1", "--socket=" + directory.resolve("mariadb.sock"), "--user=" + USER,
                "--log-error=" + directory.resolve("error.log")));
        command.addAll(options);
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(directory.resolve("mariadbd.out").toFile()));
        builder.environment().putAll(environment);
        process = builder.start();
        Await.until(this::answers, READY, "the private MariaDB answering; see " + directory.resolve("error.log"));
    }

    private boolean answers() {
        if (!process.isAlive()) {
            throw new IllegalStateException("the private MariaDB ended; see " + directory.resolve("error.log"));
        }
        try (Connection ignored = connect()) {
            return true;
        } catch (SQLException notYet) {
            return false;
        }
    }

    /** Ends the server and removes its directory. */
    @Override
    public void close() throws IOException, InterruptedException {
        if (process != null) {
            process.destroy();
            if (!process.waitFor(30, TimeUnit.SECONDS)) {
                kill();
            }
        }
        try (Stream<Path> paths = Files.walk(directory)) {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }
}
