package io.payonce.order;

import java.util.Locale;

/** The status changes a client asks for by name, and the status each one leads to. */
public enum Transition {
    SHIP(OrderStatus.SHIPPED),
    COMPLETE(OrderStatus.COMPLETED),
    CANCEL(OrderStatus.CLOSED);

    private final OrderStatus target;

    Transition(OrderStatus target) {
        this.target = target;
    }

    public OrderStatus target() {
        return target;
    }

    /** The operation name in metrics and idempotency records. */
    public String operation() {
        return name().toLowerCase(Locale.ROOT);
    }
}
