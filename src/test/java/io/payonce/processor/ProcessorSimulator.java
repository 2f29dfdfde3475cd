package io.payonce.processor;

import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Queue;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * A card processor over real HTTP, for the tests and the chaos harness, that behaves like the
 * well-known ones, idempotency included: a charge under a key it has seen answers with that
 * charge, never a second one; a key whose first request is still being answered gets 409; a key
 * sent again with other parameters gets 422. It can be told to answer slowly, to charge and then
 * lose the answer (a timeout, a 500, a reset connection) or to fail before charging, each for the
 * next requests of one order ({@link #failNextChargeOf}), or at random, or to hold them in flight until
 * a test releases them ({@link Fault#HELD}), or to be down
 * (its port refuses connections), to forget keys after a retention, as real processors do after
 * 24 hours (a search of the charges for a reference still finds every one), to refuse every call with one status before handling it, as a processor does a
 * wrong API key (401, 403) or a wrong address (404, 405), and to plant a charge of another amount,
 * currency or order under the key of the next charge request, answered as is. Its ledger of charges is what the checks compare payonce with.
 * Once told where, it pushes an event about each charge and each refund to payonce's webhook ({@link WebhookSender}).
 * Refunds ({@link SimulatedRefunds}) follow the same rules under their own keys, and are listed at
 * {@code GET /v1/ledger/refunds}.
 *
 * <p>Tokens starting with {@code tok_decline} are declined ({@code card_declined}); every other
 * token is charged.
 */
public final class ProcessorSimulator implements AutoCloseable {

    /** What a charge or refund request meets. */
    public enum Fault {
        /** Charged, answered after {@link #SLOW_ANSWER}: within payonce's timeout. */
        SLOW,
        /** Charged, and the answer held back far beyond payonce's timeout. */
        TIMEOUT_AFTER_CHARGE,
        /** Charged, then answered 500. */
        ERROR_AFTER_CHARGE,
        /** Charged, then the connection is closed without an answer. */
        RESET_AFTER_CHARGE,
        /** Answered 500 without charging. */
        ERROR_BEFORE_CHARGE,
        /**
         * Neither charged nor answered until the test releases its order ({@link ProcessorSimulator#release}),
         * then charged and answered: a call in flight, its key taken (a twin request meets 409), for as
         * long as the test needs. Never drawn at random.
         */
        HELD
    }

    /** One charge in the processor's ledger. */
    public record Charge(String id, String key, long amount, String currency, String source, String reference, String status,
                         String declineCode) {

        /** As the well-known processors write a charge: the currency in lower case. */
        public JsonObject json() {
            return new JsonObject().put("id", id).put("object", "charge").put("amount", amount).put("currency", currency.toLowerCase(Locale.ROOT))
                    .put("status", status).put("decline_code", declineCode).put("reference", reference).put("idempotency_key", key);
        }

        int httpStatus() {
            return "succeeded".equals(status) ? 200 : 402;
        }
    }

    /**
     * The chaos run's webhooks: a third of the events delivered twice, each delivery 0.5 to 1 s late
     * (about as long as payonce's processor timeout there, so that events and answers race), a
     * forged copy of one event in ten and a stale copy of one in twenty.
     */
    static final WebhookSender.Faults CHAOS_WEBHOOKS = new WebhookSender.Faults(0.3, 1_000, 0.1, 0.05);

    /** One refund in the processor's ledger; {@code status} is succeeded or failed. */
    public record Refund(String id, String key, String charge, long amount, String currency, String reference, String status,
                  String failureCode) {

        /** As the well-known processors write a refund: the currency in lower case, the key it was made under. */
        public JsonObject json() {
            return new JsonObject().put("id", id).put("object", "refund").put("charge", charge).put("amount", amount)
                    .put("currency", currency.toLowerCase(Locale.ROOT)).put("status", status).put("reference", reference)
                    .put("failure_code", failureCode).put("idempotency_key", key);
        }

        public boolean succeeded() {
            return "succeeded".equals(status);
        }

        int httpStatus() {
            return succeeded() ? 200 : 402;
        }
    }

    static final long SLOW_ANSWER = 300;
    private static final long HELD_ANSWER = 8_000;
    private static final List<Fault> DRAWN = Stream.of(Fault.values()).filter(fault -> fault != Fault.HELD).toList();

    private final Vertx vertx = Vertx.vertx();
    private volatile int port;
    private final Map<String, Charge> charges = new ConcurrentHashMap<>();
    /** Charges no key finds, by id: made by hand in the processor's dashboard, or under a key it has since forgotten. */
    private final Map<String, Charge> keyless = new ConcurrentHashMap<>();
    private final Set<String> inFlight = ConcurrentHashMap.newKeySet();
    private final FaultsByOrder chargeFaults = new FaultsByOrder();
    private final Map<String, AtomicInteger> chargeRequests = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();
    private final Random random = new Random();
    /**
     * This run's part of every charge and refund id, drawn at start: the numbers start from 1 again
     * after a restart, while a dev database keeps the payments that name the last run's ids, and a
     * charge id one payment already holds strands the next payment that meets it (one payment per charge).
     */
    private final String run = Long.toString(random.nextLong() >>> 1, 36);
    private volatile double randomFaultShare;
    private volatile HttpServer server;
    private final Map<String, Long> keyedAtNanos = new ConcurrentHashMap<>();
    private final List<Charge> underForgottenKeys = new CopyOnWriteArrayList<>();
    private volatile Duration keyRetention;
    private volatile int refusingWith;
    private volatile int refusingRefundLookupsWith;
    private volatile int chargeLookupsRefusedWith;
    private volatile JsonObject chargeLookupsRefusal;
    private volatile int searchAnsweredWith;
    private volatile JsonObject searchAnswer;
    private volatile int idsMatchedOn;
    private final Set<String> plantedKeys = ConcurrentHashMap.newKeySet();
    private final Queue<Charge> toPlant = new ConcurrentLinkedQueue<>();
    private final WebhookSender webhooks = new WebhookSender(vertx);

    private final SimulatedRefunds refunds = new SimulatedRefunds(vertx, run, this::chargeById, this::drawnFault,
            () -> randomFaultShare > 0 && random.nextDouble() < randomFaultShare / 2, () -> keyRetention, webhooks::refunded);

    private ProcessorSimulator(int port) {
        this.port = port;
        up();
    }

    /** A simulator listening on {@code port} (0: a free one). */
    public static ProcessorSimulator start(int port) {
        return new ProcessorSimulator(port);
    }

    public int port() {
        return port;
    }

    public String url() {
        return "http://127.0.0.1:" + port();
    }

    /**
     * The next charge requests of order {@code order} (reference {@code order-<id>}) meet these faults,
     * in order; later ones, and every other order's, are served normally. Per order because payonce's
     * recovery jobs may resend another test's charge at any moment, and must not meet this test's fault.
     */
    public void failNextChargeOf(long order, Fault... faults) {
        chargeFaults.queue(order, List.of(faults));
    }

    /**
     * The next refund requests of order {@code order} (reference {@code order-<id>-refund-<n>}) meet
     * these faults, in order, as its charges meet theirs; later ones, and every other order's, are served normally.
     */
    public void failNextRefundOf(long order, Fault... faults) {
        refunds.failNextOf(order, List.of(faults));
    }

    /** How many charge requests of order {@code order} are held ({@link Fault#HELD}) now: seen, and neither charged nor answered. */
    public int heldChargesOf(long order) {
        return chargeFaults.held(order);
    }

    /** How many refund requests of order {@code order} are held ({@link Fault#HELD}) now: seen, and neither refunded nor answered. */
    public int heldRefundsOf(long order) {
        return refunds.held(order);
    }

    /** Every charge and refund request of order {@code order} held so far is made and answered now. */
    public void release(long order) {
        chargeFaults.release(order);
        refunds.release(order);
    }

    /** Each charge and each refund request, with this probability, meets a fault drawn at random (the chaos harness). */
    public void failAtRandom(double share) {
        this.randomFaultShare = share;
    }

    /** The port stops accepting connections, as a processor that is down. */
    public synchronized void down() {
        HttpServer listening = server;
        server = null;
        if (listening != null) {
            await(listening.close());
        }
    }

    /** Listening again, on the same port; nothing to do while it listens. */
    public synchronized void up() {
        if (server != null) {
            return;
        }
        server = await(vertx.createHttpServer().requestHandler(this::handle).listen(port, "127.0.0.1"));
        port = server.actualPort();
    }

    /** The events it sends about its charges and refunds: none until told where to. */
    public WebhookSender webhooks() {
        return webhooks;
    }

    /** Every charge made, under a key still known or one forgotten. */
    public List<Charge> charges() {
        forgetExpiredKeys();
        List<Charge> all = new ArrayList<>(charges.values());
        all.addAll(underForgottenKeys);
        return all;
    }

    /** The charge under {@code key}, or null, as the processor knows it now. */
    public Charge chargeUnder(String key) {
        forgetExpiredKeys();
        return charges.get(key);
    }

    /**
     * A key is forgotten this long after its charge or refund was made: a lookup under it finds
     * nothing, and a charge or refund under it is a new one. The ledger keeps every charge. Until set, or after {@link #heal},
     * keys are kept for ever.
     */
    public void retainKeysFor(Duration retention) {
        this.keyRetention = retention;
    }

    /** How many charge requests arrived under {@code key}, replays and refusals included. */
    public int chargeRequestsUnder(String key) {
        AtomicInteger requests = chargeRequests.get(key);
        return requests == null ? 0 : requests.get();
    }

    /**
     * A succeeded charge of {@code amount} {@code currency} for {@code reference} that only its id
     * finds: what an operator names when the processor can no longer find a payment's charge under its key.
     */
    public Charge chargeWithoutKey(long amount, String currency, String reference) {
        return chargeWithoutKey(newChargeId(), amount, currency, reference);
    }

    /** As {@link #chargeWithoutKey(long, String, String)}, the charge's id {@code id}. */
    public Charge chargeWithoutKey(String id, long amount, String currency, String reference) {
        Charge charge = new Charge(id, null, amount, currency, "tok_visa", reference, "succeeded", null);
        keyless.put(charge.id(), charge);
        return charge;
    }

    /** Every refund the processor made or refused, under the key it was asked under. */
    public List<Refund> refunds() {
        return refunds.all();
    }

    /** The refund under {@code key}, or null. */
    public Refund refundUnder(String key) {
        return refunds.under(key);
    }

    /**
     * A succeeded refund of {@code amount} {@code currency} of {@code charge} for {@code reference}
     * that only its id finds: what an operator names when the processor can no longer find a refund
     * under its key. {@code statedKey} is the key it says it was made under, which finds nothing (made
     * by hand in the dashboard: null). It is not counted against the charge, so that a test may
     * describe any refund.
     */
    public Refund refundFoundOnlyById(String charge, long amount, String currency, String reference, String statedKey) {
        return refunds.foundOnlyById(null, charge, amount, currency, reference, statedKey);
    }

    /** As {@link #refundFoundOnlyById(String, long, String, String, String)}, the refund's id {@code id}. */
    public Refund refundFoundOnlyById(String id, String charge, long amount, String currency, String reference) {
        return refunds.foundOnlyById(id, charge, amount, currency, reference, null);
    }

    /**
     * A refund of {@code amount} of {@code charge} made by hand in the processor's dashboard (a
     * goodwill refund): under no key, for no reference, found by its id alone, and counted in the
     * charge's refunded total, as the well-known processors count one.
     */
    public Refund refundInDashboard(String charge, long amount, String currency) {
        return refunds.inDashboard(null, charge, amount, currency);
    }

    /** As {@link #refundInDashboard(String, long, String)}, the refund's id {@code id}. */
    public Refund refundInDashboard(String id, String charge, long amount, String currency) {
        return refunds.inDashboard(id, charge, amount, currency);
    }

    /**
     * The refund under {@code key}, which succeeded, failed since, as a card network may fail one days
     * later (a closed card account): its lookups say failed, its charge's refunded total no longer
     * counts it, and its refund.failed event goes out where webhooks are on. The failed refund.
     */
    public Refund failRefundAfterSuccess(String key) {
        return refunds.failAfterSuccess(key);
    }

    /** How many refund requests arrived under {@code key}, replays and refusals included. */
    public int refundRequestsUnder(String key) {
        return refunds.requestsUnder(key);
    }

    /**
     * No fault queued or drawn any more, and no webhooks: the next test starts with a processor that
     * answers and sends nothing. Requests still held are released.
     */
    public void heal() {
        chargeFaults.clear();
        toPlant.clear();
        refunds.heal();
        randomFaultShare = 0;
        keyRetention = null;
        searchAnswer = null;
        refusingWith = 0;
        refusingRefundLookupsWith = 0;
        chargeLookupsRefusedWith = 0;
        idsMatchedOn = 0;
        webhooks.off();
    }

    /**
     * A lookup of a charge or a refund by its id finds the first one whose id begins as the id asked
     * for does, in its first {@code length} characters, as a processor (or a proxy) that cuts the ids
     * it is asked for would, until {@link #heal}.
     */
    public void matchIdsOnTheirFirst(int length) {
        idsMatchedOn = length;
        refunds.matchIdsOnTheirFirst(length);
    }

    /** Whether {@code held} is the id {@code asked} names: exactly, or in their first {@code matchedOn} characters when that is not 0. */
    static boolean named(String held, String asked, int matchedOn) {
        return matchedOn == 0 ? held.equals(asked)
                : held.length() >= matchedOn && asked.length() >= matchedOn && held.regionMatches(0, asked, 0, matchedOn);
    }

    /**
     * The next charge request finds a succeeded charge of {@code amount} {@code currency} for
     * {@code reference} already made under its key, and is answered with it, as is every later
     * request and lookup under that key, whatever they say: a key that another payment used first.
     */
    public void plantUnderNextKey(long amount, String currency, String reference) {
        plantUnderNextKey(null, amount, currency, reference);
    }

    /**
     * As {@link #plantUnderNextKey(long, String, String)}, the charge's id {@code id} (null: a
     * new one): a processor's bug that names, as this key's charge, another key's charge.
     */
    public void plantUnderNextKey(String id, long amount, String currency, String reference) {
        toPlant.add(new Charge(id, null, amount, currency, "tok_planted", reference, "succeeded", null));
    }

    /**
     * The next charge request finds a declined charge of {@code amount} {@code currency} for
     * {@code reference} under its key, as {@link #plantUnderNextKey(long, String, String)} plants a
     * succeeded one: a decline that is not that request's charge.
     */
    public void plantDeclinedUnderNextKey(long amount, String currency, String reference) {
        toPlant.add(new Charge(null, null, amount, currency, "tok_planted", reference, "declined", "card_declined"));
    }

    private void plantUnder(String key) {
        Charge planted = toPlant.poll();
        if (planted != null && !charges.containsKey(key)) {
            charges.put(key, new Charge(planted.id() != null ? planted.id() : newChargeId(), key, planted.amount(), planted.currency(), planted.source(),
                    planted.reference(), planted.status(), planted.declineCode()));
            keyedAtNanos.put(key, System.nanoTime());
            plantedKeys.add(key);
        }
    }

    /**
     * The next refund request finds a refund of {@code amount} {@code currency} of charge
     * {@code chargeId} already made under its key, succeeded or failed, and is answered with it, as is
     * every later request and lookup under that key: a key that another refund used first.
     */
    public void plantRefundUnderNextKey(String chargeId, long amount, String currency, boolean succeeded) {
        plantRefundUnderNextKey(null, chargeId, amount, currency, succeeded);
    }

    /**
     * As {@link #plantRefundUnderNextKey(String, long, String, boolean)}, the refund's id {@code id}
     * (null: a new one): a processor's bug that names, as this key's refund, another key's refund.
     */
    public void plantRefundUnderNextKey(String id, String chargeId, long amount, String currency, boolean succeeded) {
        refunds.plantUnderNextKey(id, chargeId, amount, currency, succeeded);
    }

    /**
     * Every charge and refund request and lookup is answered {@code status} before anything is read,
     * charged or refunded, until {@link #heal}.
     */
    public void refuseEveryCall(int status) {
        this.refusingWith = status;
    }

    /**
     * Every refund lookup, under a key or by id, is answered {@code status} before anything is read,
     * as a gateway without those routes does, until {@link #heal}; charges and their lookups are served.
     */
    public void refuseRefundLookups(int status) {
        this.refusingRefundLookupsWith = status;
    }

    /**
     * Every charge lookup, under a key or by id, is answered {@code status} with {@code body} before
     * anything is read, as a gateway refusing the lookup itself may, until {@link #heal}; charges are
     * made as usual.
     */
    public void refuseChargeLookups(int status, JsonObject body) {
        this.chargeLookupsRefusal = body;
        this.chargeLookupsRefusedWith = status;
    }

    /**
     * The search of charges by reference answers {@code status} with {@code body}, whatever it holds,
     * until {@link #heal}: a processor that pages, lists loosely, or is down for this one call.
     */
    public void answerChargeSearchWith(int status, JsonObject body) {
        this.searchAnsweredWith = status;
        this.searchAnswer = body;
    }

    private void handle(HttpServerRequest request) {
        String path = request.path();
        int refusal = refusingWith;
        if (refusal != 0 && (path.startsWith("/v1/charges") || path.startsWith("/v1/refunds"))) {
            answer(request, refusal, new JsonObject().put("error", "refused"));
        } else if (refusingRefundLookupsWith != 0 && "GET".equals(request.method().name()) && path.startsWith("/v1/refunds/")) {
            answer(request, refusingRefundLookupsWith, new JsonObject().put("error", "refused"));
        } else if (chargeLookupsRefusedWith != 0 && "GET".equals(request.method().name()) && path.startsWith("/v1/charges/")) {
            answer(request, chargeLookupsRefusedWith, chargeLookupsRefusal);
        } else if (refunds.handled(request)) {
            return;
        } else if ("POST".equals(request.method().name()) && "/v1/charges".equals(path)) {
            request.body().onSuccess(body -> charge(request, body.toString()));
        } else if ("GET".equals(request.method().name()) && path.startsWith("/v1/charges/by-idempotency-key/")) {
            lookup(request, path.substring("/v1/charges/by-idempotency-key/".length()));
        } else if ("GET".equals(request.method().name()) && "/v1/charges/search".equals(path)) {
            search(request, request.getParam("reference"));
        } else if ("GET".equals(request.method().name()) && path.startsWith("/v1/charges/")) {
            lookupById(request, path.substring("/v1/charges/".length()));
        } else if ("GET".equals(request.method().name()) && "/v1/ledger".equals(path)) {
            JsonArray ledger = new JsonArray();
            charges().forEach(charge -> ledger.add(json(charge).put("key", charge.key()).put("source", charge.source())));
            request.response().putHeader("Content-Type", "application/json").end(ledger.encode());
        } else if ("GET".equals(request.method().name()) && "/v1/ledger/webhooks".equals(path)) {
            request.response().putHeader("Content-Type", "application/json").end(webhooks.ledger().encode());
        } else if ("POST".equals(request.method().name()) && path.startsWith("/control/down/")) {
            long millis = Long.parseLong(path.substring("/control/down/".length()));
            request.response().setStatusCode(204).end();
            vertx.setTimer(10, t -> vertx.executeBlocking(() -> {
                down();
                TimeUnit.MILLISECONDS.sleep(millis);
                up();
                return null;
            }).onFailure(e -> {
                // The chaos run must not go on against a processor that silently stayed down.
                System.err.println("processor simulator: could not come back up: " + e);
                System.exit(1);
            }));
        } else {
            request.response().setStatusCode(404).end();
        }
    }

    private void charge(HttpServerRequest request, String body) {
        String key = request.getHeader("Idempotency-Key");
        chargeRequests.computeIfAbsent(String.valueOf(key), k -> new AtomicInteger()).incrementAndGet();
        JsonObject params;
        try {
            params = new JsonObject(body);
        } catch (RuntimeException unreadable) {
            answer(request, 400, new JsonObject().put("error", "invalid_request"));
            return;
        }
        if (key == null || key.isBlank()) {
            answer(request, 400, new JsonObject().put("error", "idempotency_key_required"));
            return;
        }
        // One decision at a time: requests arrive on whichever event loop the listening server has. A
        // lock of the ledger's own, never the simulator's: down() holds that one while it waits for
        // the event loop to close the server.
        forgetExpiredKeys();
        synchronized (charges) {
            plantUnder(key);
            if (!admit(request, key, params)) {
                return;
            }
        }
        String reference = params.getString("reference");
        Fault fault = nextFault(reference);
        if (fault == Fault.ERROR_BEFORE_CHARGE) {
            inFlight.remove(key);
            answer(request, 500, new JsonObject().put("error", "api_error"));
            return;
        }
        Runnable decide = () -> {
            Charge charge;
            synchronized (charges) {
                charge = record(key, params);
                inFlight.remove(key);
            }
            webhooks.charged(charge);
            answerAfter(vertx, request, fault, charge.httpStatus(), json(charge));
        };
        if (fault == Fault.HELD) {
            chargeFaults.hold(reference, vertx.getOrCreateContext(), decide);
        } else {
            vertx.setTimer(fault == Fault.SLOW ? SLOW_ANSWER : 1, t -> decide.run());
        }
    }

    /** The answer to a request whose charge or refund was made, as {@code fault} (null: none) lets it through. */
    static void answerAfter(Vertx vertx, HttpServerRequest request, Fault fault, int status, JsonObject body) {
        if (fault == null || fault == Fault.SLOW || fault == Fault.HELD) {
            answer(request, status, body);
        } else if (fault == Fault.ERROR_AFTER_CHARGE) {
            answer(request, 500, new JsonObject().put("error", "api_error"));
        } else if (fault == Fault.RESET_AFTER_CHARGE) {
            request.connection().close();
        } else {
            vertx.setTimer(HELD_ANSWER, late -> request.connection().close());
        }
    }

    /**
     * Any charge the processor holds, under a key known, forgotten or none, by its id; null when it
     * holds none. Without the ledger's lock: refunds ask while they hold theirs, and a charge's answer
     * asks its refunds while it holds the ledger's.
     */
    private Charge chargeById(String id) {
        Charge charge = keyless.get(id);
        return charge != null ? charge : Stream.concat(charges.values().stream(), underForgottenKeys.stream())
                .filter(keyed -> keyed.id().equals(id)).findFirst().orElse(null);
    }

    /** As the well-known processors write a charge, with how much of it its refunds returned so far. */
    private JsonObject json(Charge charge) {
        return charge.json().put("amount_refunded", refunds.refundedOf(charge.id()));
    }

    /** A key seen before answers with its charge (or 422 if the parameters differ), one in flight 409; else the key is taken. */
    private boolean admit(HttpServerRequest request, String key, JsonObject params) {
        Charge existing = charges.get(key);
        if (existing != null) {
            boolean sameParameters = existing.amount() == params.getLong("amount") && existing.currency().equals(params.getString("currency"))
                    && existing.source().equals(params.getString("source"));
            if (!sameParameters && !plantedKeys.contains(key)) {
                answer(request, 422, new JsonObject().put("error", "idempotency_key_reused"));
            } else {
                request.response().putHeader("Idempotent-Replayed", "true");
                answer(request, existing.httpStatus(), json(existing));
            }
            return false;
        }
        if (!inFlight.add(key)) {
            answer(request, 409, new JsonObject().put("error", "idempotency_key_in_use"));
            return false;
        }
        return true;
    }

    private Charge record(String key, JsonObject params) {
        String source = params.getString("source");
        boolean declined = source != null && source.startsWith("tok_decline");
        Charge charge = new Charge(newChargeId(), key, params.getLong("amount"), params.getString("currency"), source,
                params.getString("reference"), declined ? "declined" : "succeeded", declined ? "card_declined" : null);
        charges.put(key, charge);
        keyedAtNanos.put(key, System.nanoTime());
        return charge;
    }

    /** {@code ch_<run>_<n>}: in the characters and length payonce keeps of a charge id (ProcessorText), unique across restarts. */
    private String newChargeId() {
        return "ch_" + run + "_" + ids.incrementAndGet();
    }

    private void forgetExpiredKeys() {
        Duration retention = keyRetention;
        if (retention == null) {
            return;
        }
        long now = System.nanoTime();
        synchronized (charges) {
            keyedAtNanos.entrySet().removeIf(keyed -> {
                boolean expired = now - keyed.getValue() >= retention.toNanos();
                if (expired) {
                    underForgottenKeys.add(charges.remove(keyed.getKey()));
                }
                return expired;
            });
        }
    }

    private void lookup(HttpServerRequest request, String key) {
        if (randomFaultShare > 0 && random.nextDouble() < randomFaultShare / 2) {
            answer(request, 500, new JsonObject().put("error", "api_error"));
            return;
        }
        forgetExpiredKeys();
        Charge charge = charges.get(key);
        if (charge == null) {
            answer(request, 404, new JsonObject().put("error", "no_such_charge"));
        } else {
            answer(request, 200, json(charge));
        }
    }

    /** GET /v1/charges/{id}: any charge the processor holds, under a key or not; fails like a lookup under a key. */
    private void lookupById(HttpServerRequest request, String id) {
        if (randomFaultShare > 0 && random.nextDouble() < randomFaultShare / 2) {
            answer(request, 500, new JsonObject().put("error", "api_error"));
            return;
        }
        int matchedOn = idsMatchedOn;
        Charge charge = matchedOn == 0 ? chargeById(id) : Stream.of(keyless.values().stream(), charges.values().stream(), underForgottenKeys.stream())
                .flatMap(held -> held).filter(held -> named(held.id(), id, matchedOn)).findFirst().orElse(null);
        if (charge == null) {
            answer(request, 404, new JsonObject().put("error", "no_such_charge"));
        } else {
            answer(request, 200, json(charge));
        }
    }

    /**
     * GET /v1/charges/search?reference=: every charge the processor holds for that reference, under a
     * key known, forgotten or none, as one whole list; fails like a lookup.
     */
    private void search(HttpServerRequest request, String reference) {
        JsonObject told = searchAnswer;
        if (told != null) {
            answer(request, searchAnsweredWith, told);
            return;
        }
        if (randomFaultShare > 0 && random.nextDouble() < randomFaultShare / 2) {
            answer(request, 500, new JsonObject().put("error", "api_error"));
            return;
        }
        JsonArray found = new JsonArray();
        Stream.concat(charges().stream(), keyless.values().stream())
                .filter(charge -> Objects.equals(charge.reference(), reference))
                .forEach(charge -> found.add(json(charge)));
        answer(request, 200, new JsonObject().put("object", "list").put("data", found).put("has_more", false));
    }

    /** A charge's reference is its order's: {@code order-<id>}. */
    private Fault nextFault(String reference) {
        Fault next = chargeFaults.next(reference);
        return next != null ? next : drawnFault();
    }

    /** With the random share, a fault drawn at random, never {@link Fault#HELD}: nothing would release it; else none. */
    private Fault drawnFault() {
        if (randomFaultShare > 0 && random.nextDouble() < randomFaultShare) {
            return DRAWN.get(random.nextInt(DRAWN.size()));
        }
        return null;
    }

    static void answer(HttpServerRequest request, int status, JsonObject body) {
        if (!request.response().ended() && !request.response().closed()) {
            request.response().setStatusCode(status).putHeader("Content-Type", "application/json").end(body.encode());
        }
    }

    private static <T> T await(io.vertx.core.Future<T> future) {
        try {
            return future.toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("The processor simulator could not change state", e);
        }
    }

    @Override
    public void close() {
        await(vertx.close());
    }

    /**
     * The chaos harness's processor: {@code port}, the share of charge requests that meet a random
     * fault and, optionally, the webhook URLs of payonce's instances (comma-separated), which it sends
     * each charge's and each refund's event to in turn, signed with PAYONCE_PROCESSOR_WEBHOOK_SECRET,
     * with {@link #CHAOS_WEBHOOKS}' duplicates, delays and forgeries.
     */
    public static void main(String[] args) throws InterruptedException {
        ProcessorSimulator simulator = start(Integer.parseInt(args[0]));
        simulator.failAtRandom(Double.parseDouble(args[1]));
        if (args.length > 2) {
            simulator.webhooks().to(List.of(args[2].split(",")), System.getenv("PAYONCE_PROCESSOR_WEBHOOK_SECRET"), CHAOS_WEBHOOKS);
        }
        System.out.println("processor simulator listening on " + simulator.url());
        Thread.currentThread().join();
    }
}
