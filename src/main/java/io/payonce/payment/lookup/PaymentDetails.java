package io.payonce.payment.lookup;

import io.payonce.payment.PaymentMethod;
import io.payonce.payment.PaymentPhase;
import io.quarkus.runtime.annotations.RegisterForReflection;

import java.time.Instant;
import java.util.List;

/**
 * A payment as {@code GET /payments/{id}} shows it: where it stands and the phases it went through.
 * {@code processorKey} is the Idempotency-Key the charge carries at the processor (what support
 * looks the charge up by), {@code chargeId} the processor's charge, {@code declineCode} the
 * processor's reason for a decline; all are null for a balance payment. {@code settlement} is the
 * audit row of an operator's settlement, shown to ops only, null where there is none. Times are
 * instants of the database's clock, written in UTC.
 */
@RegisterForReflection
public record PaymentDetails(
        long paymentId,
        long orderId,
        String userId,
        long amount,
        String currency,
        PaymentMethod method,
        PaymentPhase phase,
        String processorKey,
        String chargeId,
        String declineCode,
        Instant createdAt,
        Instant updatedAt,
        List<PhaseEntry> history,
        Settlement settlement) {

    /** One phase the payment entered, with a word on why where there is one. */
    @RegisterForReflection
    public record PhaseEntry(PaymentPhase phase, String detail, Instant at) {
    }

    /**
     * How an operator settled the payment: {@code charged} (by {@code chargeId}, marked {@code ?} and
     * cut where payonce cannot keep the id the operator named) or {@code not_charged}, who
     * ({@code settledBy}, their token's subject), why, and what the processor said of the charge.
     */
    @RegisterForReflection
    public record Settlement(String outcome, String chargeId, String reason, String settledBy, String processorSaid, Instant at) {
    }
}
