package io.payonce.events;

/**
 * How the money of a payment or refund moved, as its event names it: through the user's payonce
 * balance, or on a card through the processor. A consumer that keeps balances from events follows
 * the balance ones only; a card payment never touched the balance.
 */
public enum Method {
    BALANCE("balance"),
    CARD("card");

    private final String wireName;

    Method(String wireName) {
        this.wireName = wireName;
    }

    /** The name an event carries as {@code method}. */
    public String wireName() {
        return wireName;
    }
}
