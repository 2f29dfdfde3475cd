package io.payonce.payment.card;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.payment.PaymentPhase;

import java.time.Duration;

/** A payment as an operator's settlement finds it, and whether a worker holds its lease now. */
record SettlementTarget(CardPayment payment, boolean leased) {

    /**
     * Why an operator may not settle the payment now, or null if they may: it is settled already; a
     * worker holds it, or has taken it since {@code attempts} were read; or payonce may still learn its
     * outcome itself, its first send lying less than {@code window} back.
     */
    ApiException refusal(int attempts, Duration window) {
        String subject = "Payment " + payment.id();
        if (payment.phase().definite()) {
            return new ApiException(ErrorCode.ALREADY_SETTLED, subject, payment.phase());
        }
        if (leased || payment.attempts() != attempts) {
            return new ApiException(ErrorCode.WORKER_HOLDS_LEASE, "payment " + payment.id());
        }
        boolean overdue = payment.sinceFirstSent() != null && payment.sinceFirstSent().compareTo(window) > 0;
        if (payment.phase() != PaymentPhase.UNKNOWN || !overdue) {
            return new ApiException(ErrorCode.NOT_OVERDUE, subject, payment.phase(), window.toSeconds() + " s");
        }
        return null;
    }
}
