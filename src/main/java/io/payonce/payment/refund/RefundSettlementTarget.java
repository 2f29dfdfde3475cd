package io.payonce.payment.refund;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;

import java.time.Duration;

/**
 * A refund as an operator's settlement finds it, and whether a worker holds its lease now.
 * {@code card} is null for a refund to the balance, settled from its first commit.
 */
record RefundSettlementTarget(long refundId, RefundPhase phase, CardRefund card, boolean leased) {

    /**
     * Why an operator may not settle the refund now, or null if they may: it is settled already; a
     * worker holds it; or payonce may still learn its outcome itself, its first send lying less than
     * {@code window} back.
     */
    ApiException refusal(Duration window) {
        String subject = "Refund " + refundId;
        if (phase.definite()) {
            return new ApiException(ErrorCode.ALREADY_SETTLED, subject, phase);
        }
        if (leased) {
            return workerHoldsLease();
        }
        boolean overdue = card.sinceFirstSent() != null && card.sinceFirstSent().compareTo(window) > 0;
        if (phase != RefundPhase.UNKNOWN || !overdue) {
            return new ApiException(ErrorCode.NOT_OVERDUE, subject, phase, window.toSeconds() + " s");
        }
        return null;
    }

    /** As {@link #refusal(Duration)}, for a refund first read with {@code attempts}: a worker that took it since holds it. */
    ApiException refusalSince(int attempts, Duration window) {
        ApiException refusal = refusal(window);
        return refusal == null && card.attempts() != attempts ? workerHoldsLease() : refusal;
    }

    private ApiException workerHoldsLease() {
        return new ApiException(ErrorCode.WORKER_HOLDS_LEASE, "refund " + refundId);
    }
}
