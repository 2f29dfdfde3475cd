package io.payonce.processor;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * A refund as sent to the processor: {@code amount} minor units of {@code currency} back on the card
 * that {@code charge} (the processor's charge id) was made on; {@code reference} says what it is for.
 */
@RegisterForReflection
public record RefundRequest(String charge, long amount, String currency, String reference) {
}
