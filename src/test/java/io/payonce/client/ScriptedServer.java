package io.payonce.client;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * An HTTP server that answers each request with the next answer of its script, and keeps every
 * request it was sent: what the client sends, and when, is what its tests look at. An answer may be
 * none at all: the connection closed before a byte, as an instance killed mid-request closes it.
 */
final class ScriptedServer implements AutoCloseable {

    /** One scripted answer: {@code status} 0 closes the connection without one. */
    record Scripted(int status, String body, Map<String, String> headers) {
    }

    /** A request as it arrived. */
    record Received(String method, String path, Map<String, List<String>> headers, String body, long nanos) {

        String header(String name) {
            return headers.entrySet().stream().filter(each -> each.getKey().equalsIgnoreCase(name))
                    .map(each -> each.getValue().get(0)).findFirst().orElse(null);
        }
    }

    private final HttpServer server;
    private final BlockingQueue<Scripted> script = new LinkedBlockingQueue<>();
    private final List<Received> received = new CopyOnWriteArrayList<>();

    ScriptedServer() {
        try {
            server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        server.createContext("/", this::answer);
        server.start();
    }

    URI address() {
        return URI.create("http://127.0.0.1:" + server.getAddress().getPort());
    }

    ScriptedServer then(int status, String body, Map<String, String> headers) {
        script.add(new Scripted(status, body, headers));
        return this;
    }

    ScriptedServer then(int status, String body) {
        return then(status, body, Map.of());
    }

    /** The next request meets no answer: the connection closes. */
    ScriptedServer thenNoAnswer() {
        return then(0, "", Map.of());
    }

    List<Received> received() {
        return received;
    }

    private void answer(HttpExchange exchange) throws IOException {
        received.add(new Received(exchange.getRequestMethod(), exchange.getRequestURI().toString(), Map.copyOf(exchange.getRequestHeaders()),
                new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8), System.nanoTime()));
        Scripted next = script.poll();
        if (next == null || next.status() == 0) {
            exchange.close();
            return;
        }
        byte[] body = next.body().getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().add("Content-Type", next.status() >= 400 ? "application/problem+json" : "application/json");
        next.headers().forEach(exchange.getResponseHeaders()::add);
        exchange.sendResponseHeaders(next.status(), body.length == 0 ? -1 : body.length);
        exchange.getResponseBody().write(body);
        exchange.close();
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
