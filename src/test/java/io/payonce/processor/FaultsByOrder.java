package io.payonce.processor;

import io.payonce.processor.ProcessorSimulator.Fault;

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
 * another order passes it by.
 */
final class FaultsByOrder {

    private final Map<String, Queue<Fault>> queued = new ConcurrentHashMap<>();

    /** The next requests of order {@code order} meet {@code faults}, in order; later ones are served normally. */
    void queue(long order, List<Fault> faults) {
        queued.computeIfAbsent(reference(order), o -> new ConcurrentLinkedQueue<>()).addAll(faults);
    }

    /** The next fault queued for the order whose reference is {@code orderReference}, or null. */
    Fault next(String orderReference) {
        Queue<Fault> faults = orderReference == null ? null : queued.get(orderReference);
        return faults == null ? null : faults.poll();
    }

    void clear() {
        queued.clear();
    }

    private static String reference(long order) {
        return "order-" + order;
    }
}
