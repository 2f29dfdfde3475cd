package io.payonce.payment.card;

import io.payonce.config.PayonceConfig;
import io.payonce.db.Transactions;
import io.payonce.idempotency.Answer;
import io.payonce.payment.PaymentPhase;
import io.payonce.processor.ChargeOutcome;
import io.payonce.processor.ChargeRequest;
import io.payonce.processor.Processor;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;

/**
 * The calls to the processor for one card payment, always outside any transaction and always
 * under the payment's own processor key. The worker that makes them holds the payment's lease;
 * whatever they return goes to {@link CardSettlement}.
 */
@ApplicationScoped
class CardCharges {

    /**
     * A lease covers two calls (a resumed payment may look its charge up, then send it again) and
     * half a call's bound more to record the outcome before anyone else may take the payment over.
     */
    private static final int HALF_CALLS_PER_LEASE = 5;

    private final Pool pool;
    private final Transactions transactions;
    private final CardPaymentRepository cards;
    private final Processor processor;
    private final CardSettlement settlement;
    private final Duration lease;
    private final Duration resendWithin;

    CardCharges(Pool pool, Transactions transactions, CardPaymentRepository cards, Processor processor, CardSettlement settlement,
                PayonceConfig config) {
        this.pool = pool;
        this.transactions = transactions;
        this.cards = cards;
        this.processor = processor;
        this.settlement = settlement;
        this.lease = config.processor().timeout().multipliedBy(HALF_CALLS_PER_LEASE).dividedBy(2);
        this.resendWithin = config.processor().resendWithin();
    }

    /** How long a worker owns a payment's next step: one call to the processor and the recording of its outcome. */
    Duration lease() {
        return lease;
    }

    /**
     * Sends the charge of a payment that has STARTED, after committing CHARGE_SENT: from that point
     * on the card may have been charged, and no one assumes it was not. A worker that finds the
     * payment already moved on (it stalled past its lease and another took over) leaves it to them.
     */
    Uni<Answer> sendFirst(CardPayment payment) {
        return transactions.inTransaction(tx -> cards.markSent(tx, payment, lease).flatMap(sent -> sent
                        ? cards.recordPhase(tx, payment.id(), PaymentPhase.CHARGE_SENT, null).replaceWith(true)
                        : Uni.createFrom().item(false)))
                .flatMap(sent -> sent ? send(payment.in(PaymentPhase.CHARGE_SENT).nextAttempt()) : settlement.answerSoFar(payment));
    }

    /**
     * Drives a payment whose lease this worker took ({@code payment} as it took it: the
     * {@link CardPayment#nextAttempt} of the payment it read) to a definite outcome if the processor
     * can give one. A charge that may have been sent is looked up by its key first, and sent again
     * under the same key only if the processor holds none and the first send is recent
     * ({@code payonce.processor.resend-within}, well inside the processor's key retention): a key
     * the processor no longer remembers would make a resend a second charge. Past that, a charge
     * the processor cannot find leaves the payment UNKNOWN, overdue, for an operator. The window
     * starts at the first send that may have reached the processor, a resend included.
     */
    Uni<Answer> resume(CardPayment payment) {
        if (payment.phase() == PaymentPhase.STARTED) {
            return sendFirst(payment);
        }
        return processor.chargeUnder(payment.processorKey()).flatMap(outcome -> {
            if (!(outcome instanceof ChargeOutcome.Absent)) {
                return settlement.settle(payment, outcome);
            }
            return mayResend(payment) ? resend(payment) : settlement.settle(payment, new ChargeOutcome.Unknown(
                    "no charge found under its key, and too long after the first send to send it again"));
        });
    }

    private boolean mayResend(CardPayment payment) {
        return payment.sinceFirstSent() == null || payment.sinceFirstSent().compareTo(resendWithin) < 0;
    }

    /**
     * Records the resend before making it (its time, if no send recorded one), fenced by this
     * worker's attempts and by the window as the database sees it now: a worker whose payment another
     * has taken over, or whose reading of the window has aged past it, sends nothing, and the
     * payment waits for its next pass.
     */
    private Uni<Answer> resend(CardPayment payment) {
        return cards.markResent(pool, payment, resendWithin).flatMap(marked -> marked ? send(payment.nextAttempt()) : settlement.answerSoFar(payment));
    }

    private Uni<Answer> send(CardPayment payment) {
        ChargeRequest charge = new ChargeRequest(payment.amount(), payment.currency(), payment.cardToken(), payment.reference());
        return processor.charge(payment.processorKey(), charge).flatMap(outcome -> settlement.settle(payment, outcome));
    }
}
