package io.payonce.support;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.stream.Collectors;

/**
 * Three RabbitMQ nodes of the test's own on loopback, joined into one cluster with
 * {@code rabbitmqctl join_cluster}, as a deployment runs the broker for quorum queues: each node
 * has its own name, ports and data directory, and all share a cookie of their own. They handle a
 * partition with {@code pause_minority}, so a node cut off from the other two stops serving until
 * it sees them again. Any node can be killed, paused and restarted; the machine's broker is never touched.
 */
public final class PrivateRabbitMqCluster implements AutoCloseable {

    private static final String CONFIG = "cluster_partition_handling = pause_minority\n";
    private static final Duration WITHIN = Duration.ofSeconds(60);

    private final List<PrivateRabbitMq> nodes;

    private PrivateRabbitMqCluster(List<PrivateRabbitMq> nodes) {
        this.nodes = nodes;
    }

    /** Three nodes, booted side by side, the second and third joined to the first. */
    public static PrivateRabbitMqCluster start() throws IOException, InterruptedException {
        String cookie = UUID.randomUUID().toString().replace("-", "");
        List<PrivateRabbitMq> nodes = new ArrayList<>();
        PrivateRabbitMqCluster cluster = new PrivateRabbitMqCluster(nodes);
        try {
            for (int i = 0; i < 3; i++) {
                nodes.add(PrivateRabbitMq.create(CONFIG, cookie));
            }
            for (PrivateRabbitMq node : nodes) {
                node.launch();
            }
            for (PrivateRabbitMq node : nodes) {
                node.awaitConnectable();
            }
            for (PrivateRabbitMq joining : nodes.subList(1, 3)) {
                joining.control("stop_app");
                joining.control("reset");
                joining.control("join_cluster", nodes.get(0).node());
                joining.control("start_app");
            }
            cluster.awaitRunning(3);
        } catch (IOException | RuntimeException | InterruptedException | AssertionError failedToStart) {
            try {
                cluster.close();
            } catch (IOException | RuntimeException alsoFailed) {
                failedToStart.addSuppressed(alsoFailed);
            }
            throw failedToStart;
        }
        return cluster;
    }

    /** Node {@code n}, from 1 to 3. */
    public PrivateRabbitMq node(int n) {
        return nodes.get(n - 1);
    }

    /** The three nodes' addresses as PAYONCE_RABBITMQ_ADDRESSES takes them, first to third. */
    public String addresses() {
        return nodes.stream().map(node -> "127.0.0.1:" + node.port()).collect(Collectors.joining(","));
    }

    /** The node that leads quorum queue {@code queue}, as a running node lists it. */
    public PrivateRabbitMq leaderOf(String queue) throws IOException, InterruptedException {
        Map<String, String> leaders = leaders();
        String leader = leaders.get(queue);
        if (leader == null) {
            throw new IllegalStateException("no leader listed for queue " + queue + ": " + leaders);
        }
        return byName(leader);
    }

    /** A node that leads none of the cluster's quorum queues, if there is one. */
    public Optional<PrivateRabbitMq> nodeLeadingNothing() throws IOException, InterruptedException {
        Map<String, String> leaders = leaders();
        return nodes.stream().filter(node -> !leaders.containsValue(node.node())).findFirst();
    }

    /** Each quorum queue's leader by name, as the first node that answers lists them. */
    public Map<String, String> leaders() throws IOException, InterruptedException {
        String listed = answering().control("list_queues", "--no-table-headers", "name", "type", "leader");
        Map<String, String> leaders = new TreeMap<>();
        for (String line : listed.lines().toList()) {
            String[] columns = line.trim().split("\\s+");
            if (columns.length == 3 && "quorum".equals(columns[1])) {
                leaders.put(columns[0], columns[2]);
            }
        }
        return leaders;
    }

    /** The queues as the first node that answers lists them, with their messages and consumers: a failed test's evidence. */
    public String queues() throws IOException, InterruptedException {
        return answering().control("list_queues", "name", "type", "leader", "messages_ready", "messages_unacknowledged", "consumers");
    }

    /** Waits until {@code count} nodes run the broker, as a running node sees them. */
    public void awaitRunning(int count) {
        Await.until(this::running, seen -> seen.equals(Integer.toString(count)), WITHIN, count + " nodes running in the cluster");
    }

    /** The node that holds most client connections: a connection's process id names its node, {@code <node.N.M>}. */
    public PrivateRabbitMq nodeHoldingMostConnections() throws IOException, InterruptedException {
        String listed = answering().control("list_connections", "--no-table-headers", "pid");
        String busiest = listed.lines().map(String::trim).filter(pid -> pid.startsWith("<") && pid.indexOf('.') > 0)
                .map(pid -> pid.substring(1, pid.indexOf('.')))
                .collect(Collectors.groupingBy(node -> node, Collectors.counting()))
                .entrySet().stream().max(Map.Entry.comparingByValue()).map(Map.Entry::getKey)
                .orElseThrow(() -> new IllegalStateException("no connection listed: " + listed));
        return byName(busiest);
    }

    /** How many nodes run the broker, as the first node that answers says; or why none said. */
    private String running() {
        try {
            return answering().control("eval", "length(rabbit_nodes:all_running()).").trim();
        } catch (IOException | RuntimeException e) {
            return e.getMessage();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    private PrivateRabbitMq answering() throws InterruptedException {
        for (PrivateRabbitMq node : nodes) {
            try {
                node.control("await_startup", "--timeout", "2");
                return node;
            } catch (IOException | IllegalStateException notThisOne) {
                // killed, paused or paused itself in a minority: the next one
            }
        }
        throw new IllegalStateException("no node of the cluster answers");
    }

    private PrivateRabbitMq byName(String name) {
        return nodes.stream().filter(node -> node.node().equals(name)).findFirst()
                .orElseThrow(() -> new IllegalStateException("no node named " + name));
    }

    /** Ends every node, even when one fails to close. */
    @Override
    public void close() throws IOException, InterruptedException {
        IOException first = null;
        for (PrivateRabbitMq node : nodes) {
            try {
                node.close();
            } catch (IOException failed) {
                if (first == null) {
                    first = failed;
                } else {
                    first.addSuppressed(failed);
                }
            }
        }
        if (first != null) {
            throw first;
        }
    }
}
