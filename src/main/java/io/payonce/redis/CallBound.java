package io.payonce.redis;

import io.smallrye.mutiny.Uni;
import io.smallrye.mutiny.groups.UniOnTimeout;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.impl.ContextInternal;

import java.time.Duration;

/**
 * The time bound on a Redis call, kept by a timer on the event loop that made the call. Fault
 * tolerance's {@code @Timeout} keeps one timer thread for the whole application and wakes it for
 * every call; on the pay path, two calls per payment, those wake-ups were a measurable share of the
 * CPU a payment costs. A timer on the calling event loop is an entry in that loop's own queue. A
 * call made outside an event loop falls back to Mutiny's scheduler. Either way the call fails with
 * {@link io.smallrye.mutiny.TimeoutException}, which the circuit breaker around it counts.
 */
public final class CallBound {

    private CallBound() {
    }

    public static <T> Uni<T> within(Duration bound, Uni<T> call) {
        UniOnTimeout<T> timeout = call.ifNoItem().after(bound);
        Context context = Vertx.currentContext();
        return (context instanceof ContextInternal eventLoop ? timeout.on(eventLoop.nettyEventLoop()) : timeout).fail();
    }
}
