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
 * A loopback TCP proxy to one of the machine's stores that a test can shut and open again: shut, it
 * cuts every connection through it and refuses new ones, which is what payonce sees when that store
 * goes down; open, it forwards again. It can also hold every chunk of bytes, each way, for a latency
 * the test sets: a slow network or a loaded server, with every byte still delivered in order. The
 * store itself is never touched.
 */
public final class TcpGate implements AutoCloseable {

    private final ServerSocket listener;
    private final int targetPort;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private volatile boolean open = true;
    private volatile Duration latency = Duration.ZERO;

    private TcpGate(int targetPort) throws IOException {
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.targetPort = targetPort;
        daemon("tcp-gate-" + listener.getLocalPort(), this::accept);
    }

    /** A gate in front of 127.0.0.1:{@code targetPort}, open. */
    public static TcpGate to(int targetPort) {
        try {
            return new TcpGate(targetPort);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public int port() {
        return listener.getLocalPort();
    }

    /** Cuts every connection through the gate and refuses new ones until {@link #open()}. */
    public void shut() {
        open = false;
        sockets.forEach(TcpGate::closeQuietly);
        sockets.clear();
    }

    public void open() {
        open = true;
    }

    /** Every chunk read from now on, either way, is forwarded {@code latency} after it arrived. */
    public void slow(Duration latency) {
        this.latency = latency;
    }

    private void accept() {
        while (!listener.isClosed()) {
            try {
                Socket client = listener.accept();
                if (!open) {
                    closeQuietly(client);
                    continue;
                }
                Socket server = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                sockets.add(client);
                sockets.add(server);
                pump(client, server);
                pump(server, client);
            } catch (IOException e) {
                // The listener closed, or the store refused this one connection: the client sees it closed.
            }
        }
    }

    private record Chunk(long dueNanos, byte[] bytes) {
    }

    /** One thread reads and stamps each chunk with its due time; another writes it then, in order. */
    private void pump(Socket from, Socket to) {
        BlockingQueue<Chunk> chunks = new LinkedBlockingQueue<>();
        daemon("tcp-gate-read", () -> {
            byte[] buffer = new byte[16384];
            try (InputStream in = from.getInputStream()) {
                for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                    chunks.add(new Chunk(System.nanoTime() + latency.toNanos(), Arrays.copyOf(buffer, n)));
                }
            } catch (IOException e) {
                // This side closed.
            }
            chunks.add(new Chunk(System.nanoTime(), null));
        });
        daemon("tcp-gate-write", () -> {
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
                // One side closed: close the other too.
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
        shut();
        try {
            listener.close();
        } catch (IOException e) {
            // Already closed.
        }
    }
}
