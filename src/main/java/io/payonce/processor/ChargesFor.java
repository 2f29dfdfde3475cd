package io.payonce.processor;

import java.util.List;

/**
 * What the processor lists of the charges made for one reference: every charge that says it is for
 * that order, under any key or none, including charges under keys it has since forgotten. The one
 * proof that a card was never charged for an order that outlives the processor's key retention.
 */
public sealed interface ChargesFor {

    /** The processor's whole list, each charge read as a lookup reads one, only those naming the reference asked for. */
    record Listed(List<ChargeOutcome> charges) implements ChargesFor {
    }

    /**
     * No list: {@code outage} when asking again later may bring one (a timeout, a 5xx, a connection
     * that failed); otherwise the processor answered without one (it offers no search, or a gateway
     * refused it), which asking again will not change.
     */
    record Unclear(String reason, boolean outage) implements ChargesFor {
    }
}
