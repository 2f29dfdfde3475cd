package io.payonce.order;

import io.quarkus.runtime.annotations.RegisterForReflection;
import java.time.Instant;

/** An order as the API shows it; the submit token stays private. Times are instants of the database's clock, written in UTC. */
@RegisterForReflection
public record OrderView(
        long id,
        String orderSn,
        String userId,
        long amount,
        String currency,
        OrderStatus status,
        long refundedAmount,
        Instant createdAt,
        Instant updatedAt) {

    static OrderView of(Order order) {
        return new OrderView(order.id(), order.orderSn(), order.userId(), order.amount(), order.currency(),
                order.status(), order.refundedAmount(), order.createdAt(), order.updatedAt());
    }
}
