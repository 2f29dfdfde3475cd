package io.payonce.processor;

import io.quarkus.runtime.annotations.RegisterForReflection;

/** A charge as sent to the processor: minor units of {@code currency}, on the card the token names. */
@RegisterForReflection
public record ChargeRequest(long amount, String currency, String source, String reference) {
}
