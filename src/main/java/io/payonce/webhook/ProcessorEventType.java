package io.payonce.webhook;

import io.payonce.processor.ChargeOutcome;
import io.payonce.processor.RefundOutcome;

import java.util.Arrays;
import java.util.Optional;

/**
 * The event types payonce reads; every other type is recorded and ignored. Two settle a card
 * payment and two a refund to the card, each with the outcome its object must have.
 * {@code charge.refunded} is received and kept, not applied: it names the charge, not the refund, so
 * it cannot say which of a payment's refunds it is about, and each refund is settled by its own
 * {@code refund.succeeded} or {@code refund.failed}.
 */
enum ProcessorEventType {
    CHARGE_SUCCEEDED("charge.succeeded", ChargeOutcome.Succeeded.class),
    CHARGE_FAILED("charge.failed", ChargeOutcome.Declined.class),
    CHARGE_REFUNDED("charge.refunded", null),
    REFUND_SUCCEEDED("refund.succeeded", RefundOutcome.Succeeded.class),
    REFUND_FAILED("refund.failed", RefundOutcome.Failed.class);

    private final String type;
    private final Class<?> settlesWith;

    ProcessorEventType(String type, Class<?> settlesWith) {
        this.type = type;
        this.settlesWith = settlesWith;
    }

    static Optional<ProcessorEventType> named(String type) {
        return Arrays.stream(values()).filter(known -> known.type.equals(type)).findFirst();
    }

    /** Whether its object is a charge whose outcome settles the card payment made under the charge's key. */
    boolean settlesACharge() {
        return settlesWith != null && ChargeOutcome.class.isAssignableFrom(settlesWith);
    }

    /** Whether its object is a refund whose outcome settles the refund to the card made under the refund's key. */
    boolean settlesARefund() {
        return settlesWith != null && RefundOutcome.class.isAssignableFrom(settlesWith);
    }

    /** Whether the object's own status says what the type says: a charge.failed about a charge that succeeded is no outcome. */
    boolean saysAsItsObject(Object outcome) {
        return settlesWith != null && settlesWith.isInstance(outcome);
    }
}
