package io.payonce.payment.operation;

import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;

import java.time.Duration;

/**
 * An operation as an operator's settlement finds it, and whether a worker holds its lease now.
 * {@code subject} names it in a refusal ("Payment 7"), {@code shownPhase} is its phase in its kind's
 * words; {@code operation} is null for one that never went to the processor (a refund to the
 * balance), settled from its first commit.
 */
public record SettlementTarget<O extends Operation<O>>(String subject, Phase phase, String shownPhase, O operation, boolean leased) {

    /**
     * Why an operator may not settle the operation now, or null if they may: it is settled already;
     * a worker holds it; or payonce may still learn its outcome itself, its first send lying less
     * than {@code window} back.
     */
    public ApiException refusal(Duration window) {
        if (phase.definite()) {
            return new ApiException(ErrorCode.ALREADY_SETTLED, subject, shownPhase);
        }
        if (leased) {
            return workerHoldsLease();
        }
        boolean overdue = operation.sinceFirstSent() != null && operation.sinceFirstSent().compareTo(window) > 0;
        if (phase != Phase.UNKNOWN || !overdue) {
            return new ApiException(ErrorCode.NOT_OVERDUE, subject, shownPhase, window.toSeconds() + " s");
        }
        return null;
    }

    /**
     * Why a settlement whose compare-and-set moved nothing was refused, read as the operation stands
     * now: settled, or overdue no more, or else a worker took it since the settlement read it.
     */
    public ApiException refusalOnceMoved(Duration window) {
        ApiException refusal = refusal(window);
        return refusal != null ? refusal : workerHoldsLease();
    }

    private ApiException workerHoldsLease() {
        // Lower case: the message reads "asking the processor about payment 7".
        return new ApiException(ErrorCode.WORKER_HOLDS_LEASE, Character.toLowerCase(subject.charAt(0)) + subject.substring(1));
    }
}
