package io.payonce.processor;

/**
 * A charge or a refund whose outcome the processor left unclear: the card may or may not have been
 * charged, or the money may or may not have gone back to it, and only the processor can say.
 * {@code delivered} is false only when the processor certainly did not take the request in: it
 * could not connect, or the processor refused the call before handling it (401, 403; 404 or 405 to
 * a charge or a refund). Nothing was charged or refunded then.
 */
public record Unclear(String reason, boolean delivered) implements ChargeOutcome, RefundOutcome {

    /** Never null, so that an unclear answer is never taken for an absent one. */
    @Override
    public String unclear() {
        return reason == null ? "the processor's answer was unclear" : reason;
    }

    public Unclear(String reason) {
        this(reason, true);
    }
}
