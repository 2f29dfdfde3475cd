package io.payonce.support;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

/**
 * A MariaDB Galera cluster of the test's own: three nodes on loopback (n1, n2, n3), each with its own
 * data directory and ports, bootstrapped from n1 and joined by mariabackup state transfer, behind an
 * HAProxy that sends every connection to one writer, n1 while it is synced, else the first synced
 * backup. A test kills and restarts nodes as crashes would; every process is ended by the handle
 * that started it, and the machine's own MariaDB is never touched. The node and proxy configurations
 * are the templates under src/test/resources/galera, shared with the bash harnesses.
 */
public final class PrivateGaleraCluster implements AutoCloseable {

    public static final int NODES = 3;

    private static final Path TEMPLATES = Path.of("src/test/resources/galera");
    private static final Pattern PLACEHOLDER = Pattern.compile("\\$\\{([A-Z0-9_]+)}");
    private static final Duration BOOTSTRAP = Duration.ofSeconds(60);
    // A join copies the donor's whole data directory (a full state transfer) unless its gcache still
    // holds what the node missed.
    private static final Duration JOIN = Duration.ofSeconds(120);
    // evs.suspect_timeout and inactive_timeout in node.cnf, with room for a busy machine.
    private static final Duration EVICTION = Duration.ofSeconds(30);
    private static final Duration PROXY_CHECKS = Duration.ofSeconds(20);

    private final Path base;
    private final String clusterName = "payonce-test-" + UUID.randomUUID().toString().substring(0, 8);
    private final List<GaleraNode> nodes;
    private final int proxyPort = FreePorts.next();
    private Process proxy;

    /** What a node says of itself in its wsrep status variables. */
    public record Status(String state, int clusterSize, boolean ready, String component) {

        public boolean syncedInPrimaryOf(int size) {
            return "Synced".equals(state) && ready && "Primary".equals(component) && clusterSize == size;
        }
    }

    private PrivateGaleraCluster(Path base) {
        this.base = base;
        this.nodes = IntStream.rangeClosed(1, NODES)
                .mapToObj(number -> new GaleraNode(number, base.resolve("n" + number), base.resolve("n" + number + ".sock")))
                .toList();
    }

    /** A new cluster of three synced nodes, and its proxy sending to n1. */
    public static PrivateGaleraCluster start() throws IOException, InterruptedException {
        // Under /tmp whatever java.io.tmpdir says: the nodes' sockets live here, and a socket path
        // must stay under 108 bytes.
        PrivateGaleraCluster cluster = new PrivateGaleraCluster(Files.createTempDirectory(Path.of("/tmp"), "payonce-galera-"));
        try {
            cluster.boot();
        } catch (IOException | RuntimeException | InterruptedException | AssertionError failedToBoot) {
            cluster.close();
            throw failedToBoot;
        }
        return cluster;
    }

    /** The port where payonce would connect: the proxy's. */
    public int proxyPort() {
        return proxyPort;
    }

    /** The SQL port of node {@code number} (1 to 3), to reach it directly. */
    public int port(int number) {
        return node(number).sqlPort();
    }

    /** The number of the node the proxy sends a new connection to, as that node names itself. */
    public int writer() throws SQLException {
        try (Connection connection = connect(proxyPort);
             Statement statement = connection.createStatement();
             ResultSet row = statement.executeQuery("SELECT @@wsrep_node_name")) {
            row.next();
            return Integer.parseInt(row.getString(1).substring(1));
        }
    }

    public Status status(int number) throws SQLException {
        return node(number).status();
    }

    /** Runs {@code sql} on node {@code number} directly, as an operator's client would. */
    public void execute(int number, String sql) throws SQLException {
        try (Connection connection = connect(port(number)); Statement statement = connection.createStatement()) {
            statement.execute(sql);
        }
    }

    /** Kills node {@code number} and whatever it started with SIGKILL, as a crash would. */
    public void kill(int number) throws InterruptedException {
        node(number).kill();
    }

    /**
     * Starts node {@code number} again on its data directory, waits until it is synced with the nodes
     * still running and the proxy counts it healthy, and returns what it logged meanwhile: whether it
     * caught up by incremental (IST) or full (SST) state transfer.
     */
    public String restart(int number) throws IOException, InterruptedException {
        GaleraNode node = node(number);
        List<GaleraNode> others = nodes.stream().filter(GaleraNode::running).toList();
        // A node back on its old address while the others still count its crashed incarnation as a
        // member can break their next view installation, leaving every node non-primary (seen when
        // restarted at once): the restart waits until they have evicted it.
        others.forEach(other -> other.awaitSynced(others.size(), EVICTION));
        long logged = node.errorLogLength();
        node.rejoin();
        node.awaitSynced(others.size() + 1, JOIN);
        awaitProxyUp(node);
        return node.errorLogFrom(logged);
    }

    /** A connection as root to {@code port}: the proxy's or a node's. */
    public static Connection connect(int port) throws SQLException {
        return DriverManager.getConnection("jdbc:mariadb://127.0.0.1:" + port + "/?user=root&connectTimeout=1000&socketTimeout=30000");
    }

    private void boot() throws IOException, InterruptedException {
        String template = Files.readString(TEMPLATES.resolve("node.cnf"));
        String clusterAddress = "gcomm://" + nodes.stream().map(GaleraNode::gcommAddress).collect(Collectors.joining(","));
        for (GaleraNode node : nodes) {
            node.configure(template, clusterName, clusterAddress);
        }
        GaleraNode first = nodes.get(0);
        first.installSystemTables();
        first.bootstrap();
        first.awaitSynced(1, BOOTSTRAP);
        createCheckAccount(first);
        // One joiner at a time: a donor serves one full state transfer at once.
        for (GaleraNode joiner : nodes.subList(1, NODES)) {
            joiner.join();
            joiner.awaitSynced(joiner.number(), JOIN);
        }
        startProxy();
    }

    /**
     * The account the proxy's health check logs in as: no password and no grant, so that it can do
     * nothing but read the status variables, which need none.
     */
    private static void createCheckAccount(GaleraNode node) throws IOException {
        try (Connection connection = connect(node.sqlPort()); Statement statement = connection.createStatement()) {
            statement.execute("CREATE USER galera_check@'127.0.0.1'");
        } catch (SQLException e) {
            throw new IOException("could not create the health check's account on " + node.name(), e);
        }
    }

    private void startProxy() throws IOException {
        Path config = base.resolve("haproxy.cfg");
        Map<String, String> values = new HashMap<>(Map.of(
                "PROXY_PORT", Integer.toString(proxyPort),
                "STATS_SOCKET", statsSocket().toString()));
        nodes.forEach(node -> values.put("SQL_PORT_" + node.number(), Integer.toString(node.sqlPort())));
        Files.writeString(config, fill(Files.readString(TEMPLATES.resolve("haproxy.cfg")), values));
        proxy = new ProcessBuilder("haproxy", "-db", "-f", config.toString())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(base.resolve("haproxy.log").toFile()))
                .start();
        nodes.forEach(this::awaitProxyUp);
    }

    /** Until the proxy's own checks, not its optimistic start, have found {@code node} healthy. */
    private void awaitProxyUp(GaleraNode node) {
        Await.until(this::proxyView, view -> ("UP L7OK").equals(view.get(node.name())), PROXY_CHECKS,
                "the proxy's health check passing on " + node.name() + "; see " + base.resolve("haproxy.log"));
    }

    /**
     * Stops the proxy's health checks of node {@code number}: it keeps sending to the node as if it
     * were healthy, whatever the node now answers, until {@link #resumeProxyChecks}. A test that must
     * see payonce meet a failing writer holds the checks that would take it out a second later.
     */
    public void holdProxyChecks(int number) throws IOException {
        proxyCommand("disable health payonce-db/n" + number);
    }

    /** The proxy checks node {@code number} again, and takes it out after two failed checks. */
    public void resumeProxyChecks(int number) throws IOException {
        proxyCommand("enable health payonce-db/n" + number);
    }

    /** Each server's state and last check result as the proxy sees them, e.g. n1 → "UP L7OK". */
    private Map<String, String> proxyView() throws IOException {
        String csv;
        try {
            csv = proxyCommand("show stat");
        } catch (IOException notListeningYet) {
            return Map.of();
        }
        List<String> lines = csv.lines().filter(line -> !line.isBlank()).toList();
        List<String> header = List.of(lines.get(0).replaceFirst("^# ", "").split(","));
        Map<String, String> view = new HashMap<>();
        for (String line : lines.subList(1, lines.size())) {
            String[] fields = line.split(",", -1);
            view.put(fields[header.indexOf("svname")],
                    fields[header.indexOf("status")] + " " + fields[header.indexOf("check_status")]);
        }
        return view;
    }

    /** What the proxy answers {@code command} on its runtime socket; an error it answers is thrown. */
    private String proxyCommand(String command) throws IOException {
        if (!proxy.isAlive()) {
            throw new IllegalStateException("haproxy ended; see " + base.resolve("haproxy.log"));
        }
        String answer;
        try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
            channel.connect(UnixDomainSocketAddress.of(statsSocket()));
            channel.write(ByteBuffer.wrap((command + "\n").getBytes(StandardCharsets.US_ASCII)));
            answer = new String(Channels.newInputStream(channel).readAllBytes(), StandardCharsets.US_ASCII);
        }
        if (!command.startsWith("show") && !answer.isBlank()) {
            throw new IllegalStateException("haproxy refused '" + command + "': " + answer.strip());
        }
        return answer;
    }

    private Path statsSocket() {
        return base.resolve("haproxy.sock");
    }

    private GaleraNode node(int number) {
        return nodes.get(number - 1);
    }

    /**
     * Copies the nodes' and the proxy's logs, and the state transfers' (mariabackup's and the SST
     * script's), to target/galera-logs before the cluster's directory goes: a node that ended during a
     * test, or at its start, says why there long after the test has failed.
     */
    private void keepLogs() throws IOException {
        Path kept = Path.of("target", "galera-logs", base.getFileName().toString());
        try (Stream<Path> paths = Files.walk(base)) {
            for (Path log : paths.filter(path -> Files.isRegularFile(path) && path.getFileName().toString().endsWith(".log")).toList()) {
                Path copy = kept.resolve(base.relativize(log));
                Files.createDirectories(copy.getParent());
                Files.copy(log, copy, StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    /** {@code template} with each ${NAME} replaced by its value; a name without a value is an error. */
    static String fill(String template, Map<String, String> values) {
        Matcher placeholder = PLACEHOLDER.matcher(template);
        return placeholder.replaceAll(found -> {
            String value = values.get(found.group(1));
            if (value == null) {
                throw new IllegalArgumentException("no value for ${" + found.group(1) + "}");
            }
            return Matcher.quoteReplacement(value);
        });
    }

    @Override
    public void close() throws IOException, InterruptedException {
        if (proxy != null) {
            proxy.destroy();
            proxy.waitFor(10, TimeUnit.SECONDS);
        }
        for (GaleraNode node : nodes) {
            node.kill();
        }
        try {
            keepLogs();
        } finally {
            try (Stream<Path> paths = Files.walk(base)) {
                for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(path);
                }
            }
        }
    }
}
