package io.payonce.order;

import io.payonce.idempotency.WriteOperation;

/** The status changes a client asks for by name, the status each one leads to, and its operation. */
public enum Transition {
    SHIP(OrderStatus.SHIPPED, WriteOperation.SHIP),
    COMPLETE(OrderStatus.COMPLETED, WriteOperation.COMPLETE),
    CANCEL(OrderStatus.CLOSED, WriteOperation.CANCEL);

    private final OrderStatus target;
    private final WriteOperation operation;

    Transition(OrderStatus target, WriteOperation operation) {
        this.target = target;
        this.operation = operation;
    }

    public OrderStatus target() {
        return target;
    }

    public WriteOperation operation() {
        return operation;
    }
}
