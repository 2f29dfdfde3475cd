package io.payonce.events;

/** What happened to money, as consumers downstream see it: the event's type and its routing key. */
public enum EventType {
    PAYMENT_SUCCEEDED("payment.succeeded"),
    REFUND_CREATED("refund.created"),
    DEPOSIT_CREDITED("deposit.credited");

    private final String routingKey;

    EventType(String routingKey) {
        this.routingKey = routingKey;
    }

    public String routingKey() {
        return routingKey;
    }
}
