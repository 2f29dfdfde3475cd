package io.payonce.redis;

import io.smallrye.mutiny.TimeoutException;
import io.smallrye.mutiny.Uni;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.impl.ContextInternal;

import java.time.Duration;

/**
 * The time bound on a Redis call, kept by a timer on the event loop that made the call. Fault
 * tolerance's {@code @Timeout} keeps one timer thread for the whole application and wakes it for
 * every call; on the pay path, two calls per payment, those wake-ups were a measurable share of the
 * CPU a payment costs. A timer on the calling event loop is an entry in that loop's own queue. A
 * call that times out fails with {@link TimeoutException}, which the circuit breaker around it
 * counts, back on the caller's own Vert.x context, so that whatever follows (going on without the
 * lock, the transaction) runs where the request runs. A call made off an event loop is bounded by
 * Mutiny's scheduler instead.
 */
public final class CallBound {

    private CallBound() {
    }

    public static <T> Uni<T> within(Duration bound, Uni<T> call) {
        Context context = Vertx.currentContext();
        if (!(context instanceof ContextInternal caller) || !caller.isEventLoopContext()) {
            return call.ifNoItem().after(bound).fail();
        }
        return call.ifNoItem().after(bound).on(caller.nettyEventLoop()).fail()
                .onFailure(TimeoutException.class).recoverWithUni(timedOut -> Uni.createFrom().emitter(
                        back -> caller.runOnContext(ignored -> back.fail(timedOut))));
    }
}
