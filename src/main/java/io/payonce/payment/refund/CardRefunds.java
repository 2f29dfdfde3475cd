package io.payonce.payment.refund;

import io.payonce.config.PayonceConfig;
import io.payonce.db.Transactions;
import io.payonce.idempotency.Answer;
import io.payonce.processor.Processor;
import io.payonce.processor.RefundOutcome;
import io.payonce.processor.RefundRequest;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;

/**
 * The calls to the processor for one refund to the card, always outside any transaction and always
 * under the refund's own processor key. The worker that makes them holds the refund's lease; whatever
 * they return goes to {@link CardRefundSettlement}.
 */
@ApplicationScoped
class CardRefunds {

    /**
     * A lease covers two calls (a resumed refund may look itself up, then be sent again) and half a
     * call's bound more to record the outcome before anyone else may take the refund over.
     */
    private static final int HALF_CALLS_PER_LEASE = 5;

    private final Pool pool;
    private final Transactions transactions;
    private final CardRefundRepository cardRefunds;
    private final Processor processor;
    private final CardRefundSettlement settlement;
    private final Duration lease;
    private final Duration resendWithin;

    CardRefunds(Pool pool, Transactions transactions, CardRefundRepository cardRefunds, Processor processor,
                CardRefundSettlement settlement, PayonceConfig config) {
        this.pool = pool;
        this.transactions = transactions;
        this.cardRefunds = cardRefunds;
        this.processor = processor;
        this.settlement = settlement;
        this.lease = config.processor().timeout().multipliedBy(HALF_CALLS_PER_LEASE).dividedBy(2);
        this.resendWithin = config.processor().resendWithin();
    }

    /** How long a worker owns a refund's next step: one call to the processor and the recording of its outcome. */
    Duration lease() {
        return lease;
    }

    /**
     * Sends a refund that has STARTED, after committing SENT: from that point on the money may have
     * gone back to the card, and no one assumes it did not. A worker that finds the refund already
     * moved on (it stalled past its lease and another took over) leaves it to them.
     */
    Uni<Answer> sendFirst(CardRefund refund) {
        return transactions.inTransaction(tx -> cardRefunds.markSent(tx, refund, lease).flatMap(sent -> sent
                        ? cardRefunds.recordPhase(tx, refund.id(), RefundPhase.SENT, null).replaceWith(true)
                        : Uni.createFrom().item(false)))
                .flatMap(sent -> sent ? send(refund.in(RefundPhase.SENT).oneMoreAttempt()) : settlement.answerSoFar(refund));
    }

    /**
     * Drives a refund whose lease this worker took (counting one more attempt) to a definite outcome
     * if the processor can give one. A refund that may have been sent is looked up by its key first,
     * and sent again under the same key only if the processor holds none and the first send is recent
     * ({@code payonce.processor.resend-within}): a key the processor no longer remembers would make a
     * resend a second refund. Past that, a refund the processor cannot find stays UNKNOWN, overdue.
     */
    Uni<Answer> resume(CardRefund taken) {
        if (taken.phase() == RefundPhase.STARTED) {
            return sendFirst(taken);
        }
        return processor.refundUnder(taken.processorKey()).flatMap(outcome -> {
            if (!(outcome instanceof RefundOutcome.Absent)) {
                return settlement.settle(taken, outcome);
            }
            if (!mayResend(taken)) {
                return settlement.settle(taken, new RefundOutcome.Unknown(
                        "no refund found under its key, and too long after the first send to send it again"));
            }
            return cardRefunds.markResent(pool, taken, resendWithin)
                    .flatMap(stillOurs -> stillOurs ? send(taken.oneMoreAttempt()) : settlement.answerSoFar(taken));
        });
    }

    private boolean mayResend(CardRefund refund) {
        return refund.sinceFirstSent() == null || refund.sinceFirstSent().compareTo(resendWithin) < 0;
    }

    private Uni<Answer> send(CardRefund refund) {
        RefundRequest request = new RefundRequest(refund.chargeId(), refund.amount(), refund.currency(), refund.reference());
        return processor.refund(refund.processorKey(), request).flatMap(outcome -> settlement.settle(refund, outcome));
    }
}
