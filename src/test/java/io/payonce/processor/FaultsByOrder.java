package io.payonce.processor;

import io.payonce.processor.ProcessorSimulator.Fault;
import io.vertx.core.Context;

import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Faults queued for the requests of one order each, under the order's reference ({@code order-<id>},
 * as payonce writes it). payonce's recovery jobs resend, at any moment, the charges and refunds that
 * earlier tests left unknown: a fault that any request could meet would as often be met by one of
 * those as by the request the test sends. So a queued fault names its order, and a request of
 * another order passes it by. The requests that met {@link Fault#HELD} wait here, by order too,
 * until the test releases them.
 */
final class FaultsByOrder {

    private final Map<String, Queue<Fault>> queued = new ConcurrentHashMap<>();
    private final Map<String, Queue<Runnable>> held = new ConcurrentHashMap<>();

    /** The next requests of order {@code order} meet {@code faults}, in order; later ones are served normally. */
    void queue(long order, List<Fault> faults) {
        queued.computeIfAbsent(reference(order), o -> new ConcurrentLinkedQueue<>()).addAll(faults);
    }

    /** The next fault queued for the order whose reference is {@code orderReference}, or null. */
    Fault next(String orderReference) {
        Queue<Fault> faults = orderReference == null ? null : queued.get(orderReference);
        return faults == null ? null : faults.poll();
    }

    /**
     * Keeps a request that met {@link Fault#HELD}: {@code decide} makes its charge or refund and
     * answers it, on {@code context}, the request's own, once its order is released.
     */
    void hold(String orderReference, Context context, Runnable decide) {
        held.computeIfAbsent(orderReference, o -> new ConcurrentLinkedQueue<>()).add(() -> context.runOnContext(v -> decide.run()));
    }

    /** How many requests of order {@code order} are held now. */
    int held(long order) {
        Queue<Runnable> requests = held.get(reference(order));
        return requests == null ? 0 : requests.size();
    }

    /** Every request of order {@code order} held so far is decided and answered. */
    void release(long order) {
        release(held.get(reference(order)));
    }

    /** No fault queued any more; the requests held are let go, so that none outlives the test that held it. */
    void clear() {
        queued.clear();
        held.values().forEach(FaultsByOrder::release);
    }

    private static void release(Queue<Runnable> requests) {
        Runnable decide;
        while (requests != null && (decide = requests.poll()) != null) {
            decide.run();
        }
    }

    private static String reference(long order) {
        return "order-" + order;
    }
}
