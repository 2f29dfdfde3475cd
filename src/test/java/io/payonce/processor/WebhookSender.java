package io.payonce.processor;

import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The processor simulator's webhooks, sent as the well-known processors send theirs: an event per
 * charge ({@code charge.succeeded} or {@code charge.failed}, the charge as its object) and per refund
 * ({@code refund.succeeded} or {@code refund.failed}, the refund as its object), POSTed with
 * {@code Processor-Signature: t=<seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">}, at least once (a
 * delivery not answered 2xx is sent again, signed afresh, to the next URL, with a growing pause),
 * round-robin over the URLs it is given. It can be told to misbehave as a real network and a real
 * attacker would: deliver an event twice, hold each back a random while (so events arrive out of
 * order), and send forged copies (another secret, the outcome turned around) and stale ones (a
 * signature an hour old) beside the real ones, each under an id of its own that must never be recorded.
 * Off until {@link #to} names where to send.
 */
public final class WebhookSender {

    /**
     * How the deliveries misbehave: each share is a probability per event; each delivery is held
     * back between half of {@code delayMillis} and all of it, so events overtake one another.
     */
    public record Faults(double duplicateShare, long delayMillis, double forgedShare, double staleShare) {

        public static final Faults NONE = new Faults(0, 0, 0, 0);
    }

    /** What one delivery was: the real event, a second copy of it, or a copy that must be refused. */
    public enum Kind {
        GENUINE, DUPLICATE, FORGED, STALE;

        boolean mustBeRefused() {
            return this == FORGED || this == STALE;
        }
    }

    /** One attempt and its answer's status (0: no answer). */
    public record Delivery(String eventId, Kind kind, String url, int status) {
    }

    public static final String HEADER = "Processor-Signature";
    private static final int MOST_ATTEMPTS = 12;
    private static final long FIRST_PAUSE_MILLIS = 100;
    private static final long LONGEST_PAUSE_MILLIS = 2_000;
    private static final long STALE_SECONDS = 3_600;

    private final Vertx vertx;
    private final HttpClient client;
    private final Random random = new Random();
    private final String idPrefix = "evt_" + Long.toString(Math.abs(new Random().nextLong()), 36) + "_";
    private final AtomicLong ids = new AtomicLong();
    private final AtomicInteger next = new AtomicInteger();
    private final Queue<Delivery> deliveries = new ConcurrentLinkedQueue<>();
    private final Map<String, List<String>> eventsByKey = new ConcurrentHashMap<>();
    private volatile List<String> urls = List.of();
    private volatile String secret;
    private volatile Faults faults = Faults.NONE;

    WebhookSender(Vertx vertx) {
        this.vertx = vertx;
        this.client = vertx.createHttpClient(new HttpClientOptions().setConnectTimeout(1_000).setIdleTimeout(5));
    }

    /** From now on, each charge's and each refund's event goes to {@code urls} in turn, signed with {@code secret}, meeting {@code faults}. */
    public void to(List<String> urls, String secret, Faults faults) {
        this.secret = secret;
        this.faults = faults;
        this.urls = List.copyOf(urls);
    }

    /** No more events; those already on their way still arrive. */
    public void off() {
        urls = List.of();
        faults = Faults.NONE;
    }

    /** Every attempt so far, in the order answered. */
    public List<Delivery> deliveries() {
        return new ArrayList<>(deliveries);
    }

    /** Every attempt so far, as the chaos checker reads them: {@code {"event", "kind", "status"}}. */
    JsonArray ledger() {
        JsonArray ledger = new JsonArray();
        deliveries.forEach(delivery -> ledger.add(new JsonObject().put("event", delivery.eventId()).put("kind", delivery.kind().name())
                .put("status", delivery.status())));
        return ledger;
    }

    /** The ids of the genuine events sent about the charge or refund made under {@code key}, in the order sent. */
    public List<String> eventsAbout(String key) {
        return List.copyOf(eventsByKey.getOrDefault(key, List.of()));
    }

    /** The header that signs {@code body} at {@code timestamp} with {@code secret}, as a processor writes it. */
    public static String signature(String secret, long timestamp, String body) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            byte[] signed = mac.doFinal((timestamp + "." + body).getBytes(StandardCharsets.UTF_8));
            return "t=" + timestamp + ",v1=" + HexFormat.of().formatHex(signed);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** An event as the processor writes it: {@code object} is the charge or refund it is about. */
    public static String event(String id, String type, JsonObject object) {
        return new JsonObject().put("id", id).put("object", "event").put("type", type).put("created", nowSeconds())
                .put("data", new JsonObject().put("object", object)).encode();
    }

    /** The simulator's hook: a charge was made or declined. */
    void charged(ProcessorSimulator.Charge charge) {
        boolean succeeded = "succeeded".equals(charge.status());
        send(charge.key(), succeeded ? "charge.succeeded" : "charge.failed", charge.json(),
                succeeded ? "charge.failed" : "charge.succeeded", charge.json().put("status", succeeded ? "failed" : "succeeded"));
    }

    /** The simulator's hook: a refund was made or failed. */
    void refunded(ProcessorSimulator.Refund refund) {
        boolean succeeded = refund.succeeded();
        send(refund.key(), succeeded ? "refund.succeeded" : "refund.failed", refund.json(),
                succeeded ? "refund.failed" : "refund.succeeded", refund.json().put("status", succeeded ? "failed" : "succeeded"));
    }

    /**
     * The event of {@code type} about {@code object}, made under {@code key}, as the faults have it:
     * once or twice, late, and beside a forged copy that says the opposite ({@code turnedType} about
     * {@code turned}) and a stale copy.
     */
    private void send(String key, String type, JsonObject object, String turnedType, JsonObject turned) {
        if (urls.isEmpty()) {
            return;
        }
        String id = idPrefix + ids.incrementAndGet();
        eventsByKey.computeIfAbsent(key, k -> new CopyOnWriteArrayList<>()).add(id);
        String body = event(id, type, object);
        Faults now = faults;
        later(now, () -> deliver(id, Kind.GENUINE, body, 1));
        if (random.nextDouble() < now.duplicateShare()) {
            later(now, () -> deliver(id, Kind.DUPLICATE, body, 1));
        }
        if (random.nextDouble() < now.forgedShare()) {
            later(now, () -> deliver(id + "_forged", Kind.FORGED, event(id + "_forged", turnedType, turned), 1));
        }
        if (random.nextDouble() < now.staleShare()) {
            later(now, () -> deliver(id + "_stale", Kind.STALE, event(id + "_stale", type, object), 1));
        }
    }

    private void later(Faults faults, Runnable send) {
        long delay = Math.max(1, faults.delayMillis() / 2 + (long) (random.nextDouble() * faults.delayMillis() / 2));
        vertx.setTimer(delay, t -> send.run());
    }

    /** One attempt; a genuine event (or its copy) not answered 2xx is sent again, a refused copy never. */
    private void deliver(String id, Kind kind, String body, int attempt) {
        List<String> targets = urls;
        if (targets.isEmpty()) {
            return;
        }
        String url = targets.get(Math.floorMod(next.getAndIncrement(), targets.size()));
        String header = switch (kind) {
            case FORGED -> signature("whsec_" + Long.toString(random.nextLong(), 36), nowSeconds(), body);
            case STALE -> signature(secret, nowSeconds() - STALE_SECONDS, body);
            default -> signature(secret, nowSeconds(), body);
        };
        RequestOptions request = new RequestOptions().setMethod(HttpMethod.POST).setAbsoluteURI(url).setTimeout(5_000)
                .putHeader("Content-Type", "application/json").putHeader(HEADER, header);
        client.request(request)
                .compose(sending -> sending.send(Buffer.buffer(body, "UTF-8")))
                .compose(response -> response.body().map(ignored -> response.statusCode()))
                .onComplete(answered -> {
                    int status = answered.succeeded() ? answered.result() : 0;
                    deliveries.add(new Delivery(id, kind, url, status));
                    boolean delivered = status >= 200 && status < 300;
                    if (!delivered && !kind.mustBeRefused() && attempt < MOST_ATTEMPTS) {
                        long pause = Math.min(LONGEST_PAUSE_MILLIS, FIRST_PAUSE_MILLIS << Math.min(attempt - 1, 10));
                        vertx.setTimer(pause, t -> deliver(id, kind, body, attempt + 1));
                    }
                });
    }

    private static long nowSeconds() {
        return System.currentTimeMillis() / 1000;
    }
}
