package io.payonce.processor;

import io.payonce.processor.ProcessorSimulator.Charge;
import io.payonce.processor.ProcessorSimulator.Fault;
import io.payonce.processor.ProcessorSimulator.Refund;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * The simulator's refunds, with the key semantics of its charges: a refund under a key it has seen
 * answers with that refund, never a second one (another charge, amount or currency under the key:
 * 422); a key whose first request is still being answered gets 409; the same faults as charges can
 * lose the answer after the refund is made or fail before. A charge is never refunded beyond its
 * amount in total: a refund that would go beyond fails ({@code amount_too_large}), as one of a charge
 * that did not succeed does; so do the refunds of a card whose token starts with {@code tok_norefund}
 * ({@code expired_or_canceled_card}), for the tests of a failed refund. Keys are forgotten after the
 * simulator's retention, and a refund can be planted under the next key, as for charges. Each refund
 * made or failed is told to the webhooks, as a charge is.
 */
final class SimulatedRefunds {

    /** What follows the order's reference in a refund's: {@code order-<id>-refund-<n>}. */
    private static final String REFUND_OF_ORDER = "-refund-";

    private final Vertx vertx;
    /** The simulator's run, part of every refund id, so that no restart hands out an id a stored refund holds. */
    private final String run;
    private final Function<String, Charge> chargeById;
    private final Supplier<Fault> drawnFault;
    private final Supplier<Boolean> lookupFails;
    private final Supplier<Duration> keyRetention;
    private final Consumer<Refund> recorded;
    private final Map<String, Refund> refunds = new ConcurrentHashMap<>();
    private final Map<String, Long> keyedAtNanos = new ConcurrentHashMap<>();
    private final List<Refund> underForgottenKeys = new CopyOnWriteArrayList<>();
    private final Queue<Refund> toPlant = new ConcurrentLinkedQueue<>();
    private final Set<String> plantedKeys = ConcurrentHashMap.newKeySet();
    /** Refunds no key ever found, by id: made by hand in the processor's dashboard. */
    private final Map<String, Refund> keyless = new ConcurrentHashMap<>();
    private final Set<String> inFlight = ConcurrentHashMap.newKeySet();
    private final FaultsByOrder faults = new FaultsByOrder();
    private volatile int idsMatchedOn;
    private final Map<String, AtomicInteger> requests = new ConcurrentHashMap<>();
    private final AtomicLong ids = new AtomicLong();

    /**
     * @param run         the simulator's part of every id, drawn at its start
     * @param drawnFault  a fault drawn at random for a request the queued faults leave alone, or null
     * @param lookupFails whether this lookup meets a random 500
     * @param keyRetention how long a key is remembered after its refund was made, or null: for ever
     * @param recorded     told of each refund once it is made or has failed (its webhook event)
     */
    SimulatedRefunds(Vertx vertx, String run, Function<String, Charge> chargeById, Supplier<Fault> drawnFault, Supplier<Boolean> lookupFails,
                     Supplier<Duration> keyRetention, Consumer<Refund> recorded) {
        this.vertx = vertx;
        this.run = run;
        this.chargeById = chargeById;
        this.drawnFault = drawnFault;
        this.lookupFails = lookupFails;
        this.keyRetention = keyRetention;
        this.recorded = recorded;
    }

    /** Whether {@code request} was a refund call, answered here. */
    boolean handled(HttpServerRequest request) {
        String path = request.path();
        String method = request.method().name();
        if ("POST".equals(method) && "/v1/refunds".equals(path)) {
            request.body().onSuccess(body -> refund(request, body.toString()));
        } else if ("GET".equals(method) && path.startsWith("/v1/refunds/by-idempotency-key/")) {
            lookup(request, path.substring("/v1/refunds/by-idempotency-key/".length()));
        } else if ("GET".equals(method) && path.startsWith("/v1/refunds/")) {
            lookupById(request, path.substring("/v1/refunds/".length()));
        } else if ("GET".equals(method) && "/v1/ledger/refunds".equals(path)) {
            JsonArray ledger = new JsonArray();
            refunds.values().forEach(refund -> ledger.add(refund.json()));
            request.response().putHeader("Content-Type", "application/json").end(ledger.encode());
        } else {
            return false;
        }
        return true;
    }

    void failNextOf(long order, List<Fault> queued) {
        faults.queue(order, queued);
    }

    /** How many refund requests of order {@code order} are held ({@link Fault#HELD}) now. */
    int held(long order) {
        return faults.held(order);
    }

    /** Every refund request of order {@code order} held so far is made and answered now. */
    void release(long order) {
        faults.release(order);
    }

    void heal() {
        faults.clear();
        toPlant.clear();
        idsMatchedOn = 0;
    }

    /** As {@link ProcessorSimulator#matchIdsOnTheirFirst}. */
    void matchIdsOnTheirFirst(int length) {
        idsMatchedOn = length;
    }

    /** {@code id}: the planted refund's id, or null for a new one. */
    void plantUnderNextKey(String id, String chargeId, long amount, String currency, boolean succeeded) {
        toPlant.add(succeeded ? new Refund(id, null, chargeId, amount, currency, null, "succeeded", null)
                : new Refund(id, null, chargeId, amount, currency, null, "failed", "expired_or_canceled_card"));
    }

    /** As {@link ProcessorSimulator#failRefundAfterSuccess}. */
    Refund failAfterSuccess(String key) {
        Refund succeeded = refunds.get(key);
        if (succeeded == null || !succeeded.succeeded()) {
            throw new IllegalStateException("no refund succeeded under " + key);
        }
        Refund failed = new Refund(succeeded.id(), succeeded.key(), succeeded.charge(), succeeded.amount(), succeeded.currency(),
                succeeded.reference(), "failed", "expired_or_canceled_card");
        refunds.put(key, failed);
        recorded.accept(failed);
        return failed;
    }

    /** Every refund made, under a key still known or one forgotten. */
    List<Refund> all() {
        forgetExpiredKeys();
        List<Refund> all = new ArrayList<>(refunds.values());
        all.addAll(underForgottenKeys);
        return all;
    }

    Refund under(String key) {
        forgetExpiredKeys();
        return refunds.get(key);
    }

    /** A succeeded refund that only its id finds, as {@link ProcessorSimulator#refundFoundOnlyById} describes. */
    Refund foundOnlyById(String id, String charge, long amount, String currency, String reference, String statedKey) {
        Refund refund = new Refund(id != null ? id : newRefundId(), statedKey, charge, amount, currency, reference, "succeeded", null);
        keyless.put(refund.id(), refund);
        return refund;
    }

    /** A refund made by hand in the processor's dashboard: no key, no reference, counted against its charge. */
    Refund inDashboard(String id, String charge, long amount, String currency) {
        Refund refund = new Refund(id != null ? id : newRefundId(), null, charge, amount, currency, null, "succeeded", null);
        underForgottenKeys.add(refund);
        return refund;
    }

    /**
     * How much of charge {@code chargeId} its succeeded refunds returned, under keys known or forgotten:
     * a charge's {@code amount_refunded}. A refund only its id finds is not counted, as against the charge.
     */
    long refundedOf(String chargeId) {
        return all().stream().filter(refund -> refund.charge().equals(chargeId) && refund.succeeded()).mapToLong(Refund::amount).sum();
    }

    int requestsUnder(String key) {
        AtomicInteger count = requests.get(key);
        return count == null ? 0 : count.get();
    }

    private void refund(HttpServerRequest request, String body) {
        String key = request.getHeader("Idempotency-Key");
        requests.computeIfAbsent(String.valueOf(key), k -> new AtomicInteger()).incrementAndGet();
        JsonObject params;
        try {
            params = new JsonObject(body);
        } catch (RuntimeException unreadable) {
            ProcessorSimulator.answer(request, 400, new JsonObject().put("error", "invalid_request"));
            return;
        }
        if (key == null || key.isBlank()) {
            ProcessorSimulator.answer(request, 400, new JsonObject().put("error", "idempotency_key_required"));
            return;
        }
        synchronized (refunds) {
            forgetExpiredKeys();
            plantUnder(key, params.getString("reference"));
            if (!admit(request, key, params)) {
                return;
            }
        }
        String order = orderOf(params.getString("reference"));
        Fault fault = faults.next(order);
        if (fault == null) {
            fault = drawnFault.get();
        }
        if (fault == Fault.ERROR_BEFORE_CHARGE) {
            inFlight.remove(key);
            ProcessorSimulator.answer(request, 500, new JsonObject().put("error", "api_error"));
            return;
        }
        Fault met = fault;
        Runnable decide = () -> {
            Refund refund;
            synchronized (refunds) {
                refund = record(key, params);
                inFlight.remove(key);
            }
            recorded.accept(refund);
            ProcessorSimulator.answerAfter(vertx, request, met, refund.httpStatus(), refund.json());
        };
        if (met == Fault.HELD) {
            faults.hold(order, vertx.getOrCreateContext(), decide);
        } else {
            vertx.setTimer(met == Fault.SLOW ? ProcessorSimulator.SLOW_ANSWER : 1, t -> decide.run());
        }
    }

    /** The order a refund's reference names: {@code order-<id>} of {@code order-<id>-refund-<n>}; else null. */
    private static String orderOf(String reference) {
        int refundNo = reference == null ? -1 : reference.indexOf(REFUND_OF_ORDER);
        return refundNo < 0 ? null : reference.substring(0, refundNo);
    }

    /** A key seen before answers with its refund (or 422 if the parameters differ), one in flight 409; else the key is taken. */
    private boolean admit(HttpServerRequest request, String key, JsonObject params) {
        Refund existing = refunds.get(key);
        if (existing != null) {
            boolean sameParameters = existing.charge().equals(params.getString("charge")) && existing.amount() == params.getLong("amount", -1L)
                    && existing.currency().equalsIgnoreCase(params.getString("currency", ""));
            if (!sameParameters && !plantedKeys.contains(key)) {
                ProcessorSimulator.answer(request, 422, new JsonObject().put("error", "idempotency_key_reused"));
            } else {
                request.response().putHeader("Idempotent-Replayed", "true");
                ProcessorSimulator.answer(request, existing.httpStatus(), existing.json());
            }
            return false;
        }
        if (chargeById.apply(params.getString("charge")) == null || params.getLong("amount", 0L) <= 0) {
            ProcessorSimulator.answer(request, 400, new JsonObject().put("error", "invalid_request"));
            return false;
        }
        if (!inFlight.add(key)) {
            ProcessorSimulator.answer(request, 409, new JsonObject().put("error", "idempotency_key_in_use"));
            return false;
        }
        return true;
    }

    /** Succeeds within what the charge has left to refund; under the ledger's lock, so that racing refunds never exceed it. */
    private Refund record(String key, JsonObject params) {
        Charge charge = chargeById.apply(params.getString("charge"));
        long amount = params.getLong("amount");
        long refunded = refundedOf(charge.id());
        String failure = null;
        if (!"succeeded".equals(charge.status()) || !charge.currency().equalsIgnoreCase(params.getString("currency", ""))) {
            failure = "charge_not_refundable";
        } else if (refunded + amount > charge.amount()) {
            failure = "amount_too_large";
        } else if (charge.source() != null && charge.source().startsWith("tok_norefund")) {
            failure = "expired_or_canceled_card";
        }
        Refund refund = new Refund(newRefundId(), key, charge.id(), amount, params.getString("currency"),
                params.getString("reference"), failure == null ? "succeeded" : "failed", failure);
        refunds.put(key, refund);
        keyedAtNanos.put(key, System.nanoTime());
        return refund;
    }

    /** The planted refund under {@code key}, saying it is for {@code reference}, the request's: it differs only where the test planted it so. */
    private void plantUnder(String key, String reference) {
        Refund planted = toPlant.poll();
        if (planted != null && !refunds.containsKey(key)) {
            refunds.put(key, new Refund(planted.id() != null ? planted.id() : newRefundId(), key, planted.charge(), planted.amount(), planted.currency(),
                    reference, planted.status(), planted.failureCode()));
            keyedAtNanos.put(key, System.nanoTime());
            plantedKeys.add(key);
        }
    }

    /** {@code re_<run>_<n>}, as the simulator's charge ids are made. */
    private String newRefundId() {
        return "re_" + run + "_" + ids.incrementAndGet();
    }

    private void forgetExpiredKeys() {
        Duration retention = keyRetention.get();
        if (retention == null) {
            return;
        }
        long now = System.nanoTime();
        synchronized (refunds) {
            keyedAtNanos.entrySet().removeIf(keyed -> {
                boolean expired = now - keyed.getValue() >= retention.toNanos();
                if (expired) {
                    underForgottenKeys.add(refunds.remove(keyed.getKey()));
                }
                return expired;
            });
        }
    }

    private void lookup(HttpServerRequest request, String key) {
        if (lookupFails.get()) {
            ProcessorSimulator.answer(request, 500, new JsonObject().put("error", "api_error"));
            return;
        }
        Refund refund = under(key);
        if (refund == null) {
            ProcessorSimulator.answer(request, 404, new JsonObject().put("error", "no_such_refund"));
        } else {
            ProcessorSimulator.answer(request, 200, refund.json());
        }
    }

    /** GET /v1/refunds/{id}: any refund the processor holds, under a key known, forgotten or none; fails like a lookup under a key. */
    private void lookupById(HttpServerRequest request, String id) {
        if (lookupFails.get()) {
            ProcessorSimulator.answer(request, 500, new JsonObject().put("error", "api_error"));
            return;
        }
        int matchedOn = idsMatchedOn;
        Refund refund = matchedOn == 0 && keyless.containsKey(id) ? keyless.get(id)
                : Stream.concat(keyless.values().stream(), all().stream()).filter(held -> ProcessorSimulator.named(held.id(), id, matchedOn))
                .findFirst().orElse(null);
        if (refund == null) {
            ProcessorSimulator.answer(request, 404, new JsonObject().put("error", "no_such_refund"));
        } else {
            ProcessorSimulator.answer(request, 200, refund.json());
        }
    }
}
