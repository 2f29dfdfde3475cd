package io.payonce.order;

import io.payonce.auth.Caller;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.AnswerMeter;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.KeyedRequest;
import io.payonce.metrics.RepeatDefence;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Ship, complete and cancel. The compare-and-set alone makes a transition safe to repeat: asking
 * for the state the order is already in answers with the order as a repeat. A key adds a recorded
 * answer that a retry gets back byte for byte.
 */
@ApplicationScoped
public class OrderTransitions {

    /** Status only moves forward, so a few re-reads settle any race between transition requests. */
    private static final int ATTEMPTS = 4;

    private final OrderRepository orders;
    private final OrderAccess access;
    private final IdempotencyGuard guard;
    private final AnswerMeter meter;
    private final Pool pool;

    OrderTransitions(OrderRepository orders, OrderAccess access, IdempotencyGuard guard, AnswerMeter meter, Pool pool) {
        this.orders = orders;
        this.access = access;
        this.guard = guard;
        this.meter = meter;
        this.pool = pool;
    }

    /** Applies {@code transition}; {@code request} is null when the client sent no key. */
    public Uni<Answer> apply(Caller caller, long id, Transition transition, KeyedRequest request) {
        if (request == null) {
            return meter.counted(transition.operation(), apply(pool, caller, id, transition));
        }
        return guard.run(request.by(caller.userId(), null), tx -> apply(tx, caller, id, transition));
    }

    private Uni<Answer> apply(SqlClient client, Caller caller, long id, Transition transition) {
        return access.find(client, caller, id).flatMap(order -> moveTo(client, order, transition, ATTEMPTS));
    }

    private Uni<Answer> moveTo(SqlClient client, Order order, Transition transition, int attemptsLeft) {
        OrderStatus target = transition.target();
        if (order.status() == target) {
            return Uni.createFrom().item(Answer.ok(order).repeatCaughtBy(RepeatDefence.STATE_CAS));
        }
        if (!order.status().canBecome(target) || attemptsLeft == 0) {
            return Uni.createFrom().failure(order.illegalTransitionTo(target));
        }
        return orders.compareAndSetStatus(client, order.id(), order.status(), target)
                .flatMap(moved -> orders.findById(client, order.id())
                        .flatMap(current -> moved
                                ? Uni.createFrom().item(Answer.ok(current))
                                : moveTo(client, current, transition, attemptsLeft - 1)));
    }
}
