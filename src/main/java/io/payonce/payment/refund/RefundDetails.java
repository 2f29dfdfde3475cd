package io.payonce.payment.refund;

import io.payonce.order.OrderStatus;
import io.payonce.payment.PaymentMethod;
import io.quarkus.runtime.annotations.RegisterForReflection;

import java.time.Instant;
import java.util.List;

/**
 * A refund as {@code GET /refunds/{id}} shows it to ops: where it stands and the phases it went
 * through. {@code processorKey} is the Idempotency-Key the refund carries at the processor (what
 * support looks it up by), {@code chargeId} the charge it refunds, {@code processorRefundId} the
 * processor's refund and {@code failureCode} its reason for a failure; all are null for a refund to
 * the balance. {@code settlement} is an operator's settlement of the refund, and {@code reversal}
 * an operator's reversal of it once the processor failed it after it succeeded; each null while
 * there is none. Times are instants of the database's clock, written in UTC.
 */
@RegisterForReflection
public record RefundDetails(
        long refundId,
        long orderId,
        String userId,
        String refundNo,
        long amount,
        String currency,
        PaymentMethod method,
        RefundPhase phase,
        String processorKey,
        String chargeId,
        String processorRefundId,
        String failureCode,
        Instant createdAt,
        Instant updatedAt,
        List<PhaseEntry> history,
        Settlement settlement,
        Reversal reversal) {

    /** One phase the refund entered, with a word on why where there is one. */
    @RegisterForReflection
    public record PhaseEntry(RefundPhase phase, String detail, Instant at) {
    }

    /**
     * How an operator settled the refund: {@code refunded} (by {@code processorRefundId}, marked
     * {@code ?} and cut where payonce cannot keep the id the operator named) or
     * {@code not_refunded}, and the charge's refunds it {@code acknowledged} as not payonce's (empty
     * for none), who ({@code settledBy}, their token's subject), why, and what the processor said when
     * payonce looked the refund up.
     */
    @RegisterForReflection
    public record Settlement(String outcome, String processorRefundId, List<String> acknowledged, String reason, String settledBy,
                             String processorSaid, Instant at) {
    }

    /**
     * How an operator reversed the refund: who ({@code reversedBy}), why, what the processor said when
     * payonce looked the refund up by its id, and the order's status before and after.
     */
    @RegisterForReflection
    public record Reversal(String reason, String reversedBy, String processorSaid, OrderStatus orderBefore, OrderStatus orderAfter,
                           Instant at) {
    }
}
