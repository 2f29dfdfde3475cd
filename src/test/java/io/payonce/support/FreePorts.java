package io.payonce.support;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A free port for a process a test starts, or a closed one for a test that expects a refusal. It is
 * chosen below the kernel's ephemeral range (ip_local_port_range), which the kernel hands to
 * outgoing connections: a port from that range, checked free and closed again, can be taken by any
 * client socket before the process binds it, minutes later for the last node of a Galera cluster,
 * and the process then ends at its start. No port is handed out twice by one JVM.
 */
public final class FreePorts {

    private static final int LOWEST = 15_000;
    /** Ports enough below the range that a run's few dozen rarely meet twice. */
    private static final int ROOM = 5_000;
    private static final Set<Integer> HANDED_OUT = ConcurrentHashMap.newKeySet();

    private FreePorts() {
    }

    public static int next() {
        int[] ephemeral = ephemeralRange();
        // Below the range, or above it where a machine's range starts too low to leave room below.
        int from = ephemeral[0] - LOWEST >= ROOM ? LOWEST : ephemeral[1] + 1;
        int to = ephemeral[0] - LOWEST >= ROOM ? ephemeral[0] : 65_536;
        for (int tries = 0; tries < 1000; tries++) {
            int port = ThreadLocalRandom.current().nextInt(from, to);
            if (!HANDED_OUT.contains(port) && bindable(port) && HANDED_OUT.add(port)) {
                return port;
            }
        }
        throw new IllegalStateException("no free port from " + from + " to " + to);
    }

    private static boolean bindable(int port) {
        try (ServerSocket socket = new ServerSocket(port, 1, InetAddress.getLoopbackAddress())) {
            return true;
        } catch (IOException taken) {
            return false;
        }
    }

    /** The kernel's ephemeral range, first and last port; Linux's default where it cannot be read. */
    private static int[] ephemeralRange() {
        try {
            // Read by lines: a /proc file reports a size of 0, and Files.readString trusts the size.
            String[] range = Files.readAllLines(Path.of("/proc/sys/net/ipv4/ip_local_port_range")).get(0).trim().split("\\s+");
            return new int[] {Integer.parseInt(range[0]), Integer.parseInt(range[1])};
        } catch (IOException | RuntimeException unreadable) {
            return new int[] {32_768, 60_999};
        }
    }
}
