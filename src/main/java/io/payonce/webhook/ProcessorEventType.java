package io.payonce.webhook;

import io.payonce.processor.ChargeOutcome;

import java.util.Arrays;
import java.util.Optional;

/**
 * The event types payonce reads; every other type is recorded and ignored. Two settle a card
 * payment, each with the outcome its charge must have; the refund types are received and kept, not
 * applied, while refunds are not settled from the processor's events.
 */
enum ProcessorEventType {
    CHARGE_SUCCEEDED("charge.succeeded", ChargeOutcome.Succeeded.class),
    CHARGE_FAILED("charge.failed", ChargeOutcome.Declined.class),
    CHARGE_REFUNDED("charge.refunded", null),
    REFUND_SUCCEEDED("refund.succeeded", null),
    REFUND_FAILED("refund.failed", null);

    private final String type;
    private final Class<? extends ChargeOutcome> settlesWith;

    ProcessorEventType(String type, Class<? extends ChargeOutcome> settlesWith) {
        this.type = type;
        this.settlesWith = settlesWith;
    }

    static Optional<ProcessorEventType> named(String type) {
        return Arrays.stream(values()).filter(known -> known.type.equals(type)).findFirst();
    }

    /** Whether its object is a charge whose outcome settles the card payment made under the charge's key. */
    boolean settlesACharge() {
        return settlesWith != null;
    }

    /** Whether the charge's own status says what the type says: a charge.failed about a charge that succeeded is no outcome. */
    boolean saysAsItsCharge(ChargeOutcome outcome) {
        return settlesWith != null && settlesWith.isInstance(outcome);
    }
}
