package io.payonce.support;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One mariadbd of a {@link PrivateGaleraCluster}: its directory, its four ports (SQL, group
 * communication, incremental and full state transfer) and the process that runs it, started from the
 * shared node.cnf template and ended by its own handle.
 */
final class GaleraNode {

    private static final String USER = System.getProperty("user.name");
    private static final Pattern RECOVERED_POSITION = Pattern.compile("WSREP: Recovered position: (\\S+)");

    private final int number;
    private final Path directory;
    private final Path socket;
    private final int sqlPort = FreePorts.next();
    private final int gcommPort = FreePorts.next();
    private final int istPort = FreePorts.next();
    private final int sstPort = FreePorts.next();
    private Process process;

    GaleraNode(int number, Path directory, Path socket) {
        this.number = number;
        this.directory = directory;
        this.socket = socket;
    }

    int number() {
        return number;
    }

    String name() {
        return "n" + number;
    }

    int sqlPort() {
        return sqlPort;
    }

    String gcommAddress() {
        return "127.0.0.1:" + gcommPort;
    }

    Path errorLog() {
        return directory.resolve("error.log");
    }

    /** Writes this node's my.cnf from the template, and its empty data directory. */
    void configure(String template, String clusterName, String clusterAddress) throws IOException {
        Files.createDirectories(directory.resolve("data"));
        Files.writeString(config(), PrivateGaleraCluster.fill(template, Map.of(
                "NODE_DIR", directory.toString(),
                "SOCKET", socket.toString(),
                "SQL_PORT", Integer.toString(sqlPort),
                "CLUSTER_NAME", clusterName,
                "CLUSTER_ADDRESS", clusterAddress,
                "NODE_NAME", name(),
                "GCOMM_PORT", Integer.toString(gcommPort),
                "IST_PORT", Integer.toString(istPort),
                "SST_PORT", Integer.toString(sstPort))));
    }

    /**
     * The system tables, for the node that bootstraps the cluster; the others start empty and receive
     * everything, these tables included, from a donor's backup before their storage engine starts.
     */
    void installSystemTables() throws IOException, InterruptedException {
        PrivateMariaDb.installSystemTables(directory.resolve("data"), directory.resolve("install.log"));
    }

    /** Starts mariadbd as the first node of a new cluster. */
    void bootstrap() throws IOException {
        start(List.of("--wsrep-new-cluster"));
    }

    /** Starts mariadbd joining the running nodes; with an empty data directory, by full state transfer. */
    void join() throws IOException {
        start(List.of());
    }

    /**
     * Starts mariadbd again on its data directory, from the position its InnoDB holds, so that it
     * asks the cluster only for what it missed (IST). After a crash grastate.dat says seqno -1, and a
     * node started without its position would ask for a full transfer; the position is recovered as
     * /usr/bin/galera_recovery does for the packaged service, by a recovery run of the server.
     */
    void rejoin() throws IOException, InterruptedException {
        Path log = directory.resolve("recovery.log");
        Process recovery = new ProcessBuilder(command(List.of("--wsrep-recover", "--disable-log-error")))
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        if (!recovery.waitFor(60, TimeUnit.SECONDS) || recovery.exitValue() != 0) {
            recovery.destroyForcibly();
            throw new IllegalStateException("the position recovery of " + name() + " failed; see " + log);
        }
        Matcher recovered = RECOVERED_POSITION.matcher(Files.readString(log));
        if (!recovered.find()) {
            throw new IllegalStateException("no position recovered for " + name() + "; see " + log);
        }
        start(List.of("--wsrep-start-position=" + recovered.group(1)));
    }

    private void start(List<String> options) throws IOException {
        process = new ProcessBuilder(command(options))
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(directory.resolve("mariadbd.out").toFile()))
                .start();
    }

    private List<String> command(List<String> options) {
        // --defaults-file must come first; the server passes it on to the state transfer scripts.
        List<String> command = new ArrayList<>(List.of("mariadbd", "--defaults-file=" + config(), "--user=" + USER));
        command.addAll(options);
        return command;
    }

    boolean running() {
        return process != null && process.isAlive();
    }

    /**
     * SIGKILL, as a crash: nothing flushed, no goodbye to the group. A state transfer in flight has
     * children (the SST script, socat, mariabackup) holding ports; they are taken before the server
     * dies, while they are still its descendants, and killed too.
     */
    void kill() throws InterruptedException {
        if (process == null) {
            return;
        }
        List<ProcessHandle> children = process.descendants().toList();
        process.destroyForcibly();
        children.forEach(ProcessHandle::destroyForcibly);
        process.waitFor(30, TimeUnit.SECONDS);
        for (ProcessHandle child : children) {
            child.onExit().completeOnTimeout(child, 30, TimeUnit.SECONDS).join();
        }
    }

    /** Waits until this node is synced, ready and in a primary component of {@code clusterSize} nodes. */
    void awaitSynced(int clusterSize, Duration timeout) {
        Await.until(this::statusOnceUp, seen -> seen != null && seen.syncedInPrimaryOf(clusterSize), timeout,
                name() + " synced in a primary component of " + clusterSize);
    }

    PrivateGaleraCluster.Status status() throws SQLException {
        Map<String, String> values = new HashMap<>();
        try (Connection connection = PrivateGaleraCluster.connect(sqlPort);
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery("SHOW GLOBAL STATUS WHERE Variable_name IN "
                     + "('wsrep_local_state_comment', 'wsrep_cluster_size', 'wsrep_ready', 'wsrep_cluster_status')")) {
            while (rows.next()) {
                values.put(rows.getString(1), rows.getString(2));
            }
        }
        return new PrivateGaleraCluster.Status(values.get("wsrep_local_state_comment"),
                Integer.parseInt(values.getOrDefault("wsrep_cluster_size", "0")),
                "ON".equals(values.get("wsrep_ready")), values.get("wsrep_cluster_status"));
    }

    private PrivateGaleraCluster.Status statusOnceUp() {
        try {
            return status();
        } catch (SQLException notYet) {
            if (!running()) {
                throw new IllegalStateException(name() + " ended; the last lines of its error log (kept in target/galera-logs):\n"
                        + lastLinesOfErrorLog(15));
            }
            return null;
        }
    }

    private String lastLinesOfErrorLog(int count) {
        try {
            List<String> lines = Files.readAllLines(errorLog());
            return String.join("\n", lines.subList(Math.max(0, lines.size() - count), lines.size()));
        } catch (IOException | UncheckedIOException unreadable) {
            return "(unreadable: " + unreadable.getMessage() + ")";
        }
    }

    long errorLogLength() throws IOException {
        return Files.exists(errorLog()) ? Files.size(errorLog()) : 0;
    }

    /** What the node has logged since {@code offset}, the length of its error log at an earlier moment. */
    String errorLogFrom(long offset) throws IOException {
        try (RandomAccessFile log = new RandomAccessFile(errorLog().toFile(), "r")) {
            byte[] written = new byte[(int) (log.length() - offset)];
            log.seek(offset);
            log.readFully(written);
            return new String(written, StandardCharsets.UTF_8);
        }
    }

    private Path config() {
        return directory.resolve("my.cnf");
    }
}
