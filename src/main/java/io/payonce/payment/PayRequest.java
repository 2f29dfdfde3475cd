package io.payonce.payment;

import jakarta.validation.constraints.Positive;

/**
 * The optional body of a pay request. The amount charged is always the order's; a client that
 * states the amount it expects is refused when the order says otherwise.
 */
public record PayRequest(@Positive Long expectedAmount) {
}
