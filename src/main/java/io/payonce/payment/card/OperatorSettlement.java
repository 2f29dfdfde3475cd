package io.payonce.payment.card;

import io.payonce.account.EntryType;
import io.payonce.auth.Caller;
import io.payonce.config.PayonceConfig;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.events.Outbox;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.KeyedRequest;
import io.payonce.idempotency.KeyedWrite;
import io.payonce.payment.PaymentPhase;
import io.payonce.payment.operation.Lifecycle;
import io.payonce.processor.Processor;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;

/**
 * An operator settles a card payment the processor cannot account for: UNKNOWN past the window in
 * which payonce would send its charge again, so that only a person who looked into it can release
 * its order from PAYING. As a keyed write, top to bottom: a finished key answers from its record;
 * the payment must be overdue and no worker may hold it; the processor is asked, outside any
 * transaction, and must confirm what the operator says (the charge they name is this payment's, and
 * the payment's own key holds no other; or neither the key nor the processor's list of the order's
 * charges holds one that succeeded); then one transaction claims the key, moves the phase by
 * compare-and-set (on all that was checked, so that a worker that took the payment meanwhile, or a
 * twin settlement, wins alone), records the outcome exactly as the processor's own would be recorded
 * ({@link CardSettlement}: the order, the event, the client's answer under the client's key), writes
 * the audit row and the settlement's event, and stores the operator's answer. A refusal writes nothing
 * and leaves the key free.
 */
@ApplicationScoped
class OperatorSettlement {

    /** The decline code of a payment an operator settled as not charged: the client's 402 names it. */
    static final String SETTLED_NOT_CHARGED = "settled_not_charged";

    private final Pool pool;
    private final IdempotencyGuard guard;
    private final OperatorSettlementRepository settlements;
    private final CardSettlement outcomes;
    private final Processor processor;
    private final Outbox outbox;
    private final Duration window;
    private final Duration keyRetention;

    OperatorSettlement(Pool pool, IdempotencyGuard guard, OperatorSettlementRepository settlements, CardSettlement outcomes,
                       Processor processor, Outbox outbox, Lifecycle lifecycle, PayonceConfig config) {
        this.pool = pool;
        this.guard = guard;
        this.settlements = settlements;
        this.outcomes = outcomes;
        this.processor = processor;
        this.outbox = outbox;
        // A resend decided just inside the resend window may still be on its way, for one lease.
        this.window = config.processor().resendWithin().plus(lifecycle.lease());
        this.keyRetention = config.processor().keyRetention();
    }

    /** Settles payment {@code paymentId} as {@code request} says, for {@code operator}, once per key. */
    Uni<Answer> settle(Caller operator, long paymentId, KeyedRequest keyed, SettlementRequest request) {
        KeyedWrite write = keyed.by(operator.userId(), request);
        return guard.firstRead(write, settlements.findWithRecord(pool, paymentId, write).map(found -> found.map(target -> {
            if (target == null) {
                throw new ApiException(ErrorCode.PAYMENT_NOT_FOUND, paymentId);
            }
            return target;
        }))).flatMap(first -> first.answered() ? Uni.createFrom().item(first.stored()) : settle(first.row(), write, request));
    }

    private Uni<Answer> settle(SettlementTarget target, KeyedWrite write, SettlementRequest request) {
        CardPayment payment = target.payment();
        ApiException refusal = target.refusal(payment.attempts(), window);
        if (refusal != null) {
            return Uni.createFrom().failure(refusal);
        }
        return askProcessor(payment, request)
                .flatMap(verdict -> guard.run(write, tx -> record(tx, payment, write, request, verdict)));
    }

    /**
     * The charge under the payment's key and, for charged, the charge the operator names, or, for not
     * charged, the processor's list of the order's charges; outside any transaction.
     */
    private Uni<ProcessorVerdict> askProcessor(CardPayment payment, SettlementRequest request) {
        return processor.chargeUnder(payment.processorKey()).flatMap(underKey -> request.charged()
                ? processor.chargeById(request.chargeId()).map(named -> ProcessorVerdict.charged(payment, request, underKey, named))
                : processor.chargesFor(payment.reference()).map(forOrder -> ProcessorVerdict.notCharged(payment, underKey, forOrder, keyRetention)));
    }

    private Uni<Answer> record(SqlConnection tx, CardPayment payment, KeyedWrite write, SettlementRequest request, ProcessorVerdict verdict) {
        Uni<Boolean> moved = request.charged()
                ? settlements.succeed(tx, payment, request.chargeId(), window)
                : settlements.decline(tx, payment, SETTLED_NOT_CHARGED, window);
        return moved.flatMap(settled -> settled
                ? recordSettled(tx, payment, write, request, verdict)
                : settlements.find(tx, payment.id()).map(now -> {
                    ApiException refusal = now.refusal(payment.attempts(), window);
                    throw refusal != null ? refusal : new ApiException(ErrorCode.WORKER_HOLDS_LEASE, "payment " + payment.id());
                }));
    }

    private Uni<Answer> recordSettled(SqlConnection tx, CardPayment payment, KeyedWrite write, SettlementRequest request,
                                      ProcessorVerdict verdict) {
        String operator = write.scope();
        PaymentPhase phase = request.charged() ? PaymentPhase.SUCCEEDED : PaymentPhase.DECLINED;
        Uni<Answer> clientsAnswer = request.charged()
                ? outcomes.charged(tx, payment, "charge " + request.chargeId() + ", settled by an operator")
                : outcomes.notCharged(tx, payment, SETTLED_NOT_CHARGED, SETTLED_NOT_CHARGED + ", settled by an operator");
        return clientsAnswer
                .flatMap(v -> settlements.insertAudit(tx, payment.id(), operator, write.key().value(), request, verdict.said()))
                .flatMap(v -> outbox.recordSettlement(tx, payment.userId(), payment.orderId(), EntryType.referenceOf(payment.id()),
                        payment.amount(), payment.currency(), write.key().value(), request.outcome().text()))
                .replaceWith(Answer.created(new SettlementView(payment.id(), payment.orderId(), phase, request.outcome(), request.chargeId(),
                        request.reason(), operator, verdict.said())));
    }
}
