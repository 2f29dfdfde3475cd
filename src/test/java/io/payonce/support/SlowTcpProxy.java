package io.payonce.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * A loopback TCP proxy to one of the machine's stores that holds every chunk of bytes, each way,
 * for a latency the test sets and changes at will: a slow network or a loaded server, as the
 * client sees it, with every byte still delivered in order. The store itself is never touched.
 */
public final class SlowTcpProxy implements AutoCloseable {

    private final ServerSocket listener;
    private final int targetPort;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private volatile Duration latency = Duration.ZERO;

    private SlowTcpProxy(int targetPort) throws IOException {
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.targetPort = targetPort;
        daemon("slow-proxy-" + listener.getLocalPort(), this::accept);
    }

    /** A proxy to 127.0.0.1:{@code targetPort}, with no latency until {@link #slow(Duration)}. */
    public static SlowTcpProxy to(int targetPort) {
        try {
            return new SlowTcpProxy(targetPort);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public int port() {
        return listener.getLocalPort();
    }

    /** Every chunk read from now on, either way, is forwarded {@code latency} after it arrived. */
    public void slow(Duration latency) {
        this.latency = latency;
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                sockets.add(client);
                sockets.add(server);
                forward(client, server);
                forward(server, client);
            } catch (IOException e) {
                // The listener closed, or the store refused this one connection: the client sees it closed.
            }
        }
    }

    private record Chunk(long dueNanos, byte[] bytes) {
    }

    /** One thread reads and stamps each chunk with its due time; another writes it then, in order. */
    private void forward(Socket from, Socket to) {
        BlockingQueue<Chunk> chunks = new LinkedBlockingQueue<>();
        daemon("slow-proxy-read", () -> {
            byte[] buffer = new byte[16384];
            try (InputStream in = from.getInputStream()) {
                for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                    chunks.add(new Chunk(System.nanoTime() + latency.toNanos(), Arrays.copyOf(buffer, n)));
                }
            } catch (IOException e) {
                // This side closed.
            }
            chunks.add(new Chunk(System.nanoTime() + latency.toNanos(), null));
        });
        daemon("slow-proxy-write", () -> {
            try (OutputStream out = to.getOutputStream()) {
                for (Chunk chunk = chunks.take(); chunk.bytes() != null; chunk = chunks.take()) {
                    long wait = chunk.dueNanos() - System.nanoTime();
                    if (wait > 0) {
                        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                    }
                    out.write(chunk.bytes());
                    out.flush();
                }
            } catch (IOException | InterruptedException e) {
                // The other side closed.
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                sockets.remove(from);
                sockets.remove(to);
            }
        });
    }

    private static void daemon(String name, Runnable task) {
        Thread thread = new Thread(task, name);
        thread.setDaemon(true);
        thread.start();
    }

    private static void closeQuietly(Socket socket) {
        try {
            socket.close();
        } catch (IOException e) {
            // Already closed.
        }
    }

    @Override
    public void close() {
        try {
            listener.close();
        } catch (IOException e) {
            // Already closed.
        }
        sockets.forEach(SlowTcpProxy::closeQuietly);
    }
}
