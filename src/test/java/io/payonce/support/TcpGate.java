package io.payonce.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.atomic.AtomicReference;

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
    private final AtomicReference<Cut> armedCut = new AtomicReference<>();

    /** How much of what each client sends first the gate keeps: its handshake and session settings. */
    private static final int OPENING_BYTES = 8192;

    private TcpGate(int port, int targetPort) throws IOException {
        this.listener = new ServerSocket(port, 50, InetAddress.getLoopbackAddress());
        this.targetPort = targetPort;
        daemon("tcp-gate-" + listener.getLocalPort(), this::accept);
    }

    /** A gate in front of 127.0.0.1:{@code targetPort}, open. */
    public static TcpGate to(int targetPort) {
        return on(0, targetPort);
    }

    /** A gate on loopback port {@code port} (0 for any free one) in front of 127.0.0.1:{@code targetPort}, open. */
    public static TcpGate on(int port, int targetPort) {
        try {
            return new TcpGate(port, targetPort);
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

    /**
     * On a connection whose client has sent {@code seen} (in its first {@value #OPENING_BYTES} bytes,
     * even before this call, or since), the client's next chunk that contains {@code then} is
     * forwarded to the store and the connection cut before the store's reply can come back: the
     * store runs what it got, and the client never learns what became of it. Once.
     */
    public void cutAfter(String seen, String then) {
        armedCut.set(new Cut(seen, then));
    }

    /** Whether the cut {@link #cutAfter} armed has happened. */
    public boolean cutDone() {
        return armedCut.get() == null;
    }

    private record Cut(String seen, String then) {
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
                pump(client, server, true);
                pump(server, client, false);
            } catch (IOException e) {
                // The listener closed, or the store refused this one connection: the client sees it closed.
            }
        }
    }

    private record Chunk(long dueNanos, byte[] bytes, boolean cutBefore) {
    }

    /**
     * One thread reads and stamps each chunk with its due time; another writes it then, in order. A
     * chunk marked by an armed {@link #cutAfter} is written after the client's side is closed, and
     * the store's side closed right after it.
     */
    private void pump(Socket from, Socket to, boolean fromClient) {
        BlockingQueue<Chunk> chunks = new LinkedBlockingQueue<>();
        daemon("tcp-gate-read", () -> {
            byte[] buffer = new byte[16384];
            StringBuilder sent = new StringBuilder();
            try (InputStream in = from.getInputStream()) {
                for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                    byte[] bytes = Arrays.copyOf(buffer, n);
                    Cut cut = fromClient ? armedCut.get() : null;
                    boolean cutBefore = cut != null && sent.indexOf(cut.seen()) >= 0 && latin1(bytes).contains(cut.then())
                            && armedCut.compareAndSet(cut, null);
                    if (fromClient) {
                        remember(sent, bytes, cut);
                    }
                    chunks.add(new Chunk(System.nanoTime() + latency.toNanos(), bytes, cutBefore));
                }
            } catch (IOException e) {
                // This side closed.
            }
            chunks.add(new Chunk(System.nanoTime(), null, false));
        });
        daemon("tcp-gate-write", () -> {
            try (OutputStream out = to.getOutputStream()) {
                for (Chunk chunk = chunks.take(); chunk.bytes() != null; chunk = chunks.take()) {
                    long wait = chunk.dueNanos() - System.nanoTime();
                    if (wait > 0) {
                        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
                    }
                    if (chunk.cutBefore()) {
                        closeQuietly(from);
                    }
                    out.write(chunk.bytes());
                    out.flush();
                    if (chunk.cutBefore()) {
                        break;
                    }
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

    /**
     * Keeps the client's first bytes, and once a cut is armed whatever carries its {@code seen}: all
     * a connection must have sent for {@link #cutAfter} to pick it.
     */
    private static void remember(StringBuilder sent, byte[] bytes, Cut cut) {
        if (sent.length() < OPENING_BYTES || cut != null && latin1(bytes).contains(cut.seen())) {
            sent.append(latin1(bytes));
        }
    }

    /** Byte for byte, whatever the encoding: ISO-8859-1 maps each byte to one char. */
    private static String latin1(byte[] bytes) {
        return new String(bytes, StandardCharsets.ISO_8859_1);
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
