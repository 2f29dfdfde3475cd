package io.payonce.payment;

import io.quarkus.runtime.annotations.RegisterForReflection;

/**
 * The answer to a pay request: the order's payment. {@code phase} is SUCCEEDED in a 201, and
 * UNKNOWN in the 202 of a card payment whose processor's answer was lost.
 */
@RegisterForReflection
public record PaymentView(long paymentId, long orderId, long amount, String currency, PaymentMethod method, PaymentPhase phase) {

    /** Where payments are read, each at its id beneath. */
    public static final String PATH = "/payments";

    /** Where the client reads payment {@code paymentId}: the Location of a 202. */
    public static String location(long paymentId) {
        return PATH + "/" + paymentId;
    }
}
