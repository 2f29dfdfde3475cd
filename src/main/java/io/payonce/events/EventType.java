package io.payonce.events;

/** What happened to money, as consumers downstream see it: the event's type and its routing key. */
public enum EventType {
    PAYMENT_SUCCEEDED("payment.succeeded"),
    /**
     * An operator settled a card payment the processor could not account for, charged or not charged
     * (the event's {@code outcome}). One that was charged has its {@code payment.succeeded} besides,
     * as every card payment that charged: this one tells who decided, not that money moved.
     */
    PAYMENT_SETTLED_BY_OPERATOR("payment.settled-by-operator"),
    REFUND_CREATED("refund.created"),
    /**
     * An operator settled a refund to the card the processor could not account for, refunded or not
     * refunded (the event's {@code outcome}). One that was refunded has its {@code refund.created}
     * besides, as every refund to the card that succeeded: this one tells who decided, not that money moved.
     */
    REFUND_SETTLED_BY_OPERATOR("refund.settled-by-operator"),
    /**
     * An operator reversed a refund to the card the processor failed after it had succeeded: the
     * money its {@code refund.created} told of never went back to the card, and its amount is
     * refundable again.
     */
    REFUND_REVERSED("refund.reversed"),
    DEPOSIT_CREDITED("deposit.credited");

    private final String routingKey;

    EventType(String routingKey) {
        this.routingKey = routingKey;
    }

    public String routingKey() {
        return routingKey;
    }
}
