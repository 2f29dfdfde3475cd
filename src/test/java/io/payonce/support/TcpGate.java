package io.payonce.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A loopback TCP proxy to one of the machine's stores that a test can shut and open again: shut, it
 * cuts every connection through it and refuses new ones, which is what payonce sees when that store
 * goes down; open, it forwards again. The store itself is never touched.
 */
public final class TcpGate implements AutoCloseable {

    private final ServerSocket listener;
    private final int targetPort;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private volatile boolean open = true;

    private TcpGate(int targetPort) throws IOException {
        this.listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        this.targetPort = targetPort;
        Thread acceptor = new Thread(this::accept, "tcp-gate-" + listener.getLocalPort());
        acceptor.setDaemon(true);
        acceptor.start();
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

    private void pump(Socket from, Socket to) {
        Thread pump = new Thread(() -> {
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                in.transferTo(out);
            } catch (IOException e) {
                // One side closed: close the other too.
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                sockets.remove(from);
                sockets.remove(to);
            }
        }, "tcp-gate-pump");
        pump.setDaemon(true);
        pump.start();
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
