package io.payonce.payment.refund;

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
import io.payonce.order.Order;
import io.payonce.order.OrderRepository;
import io.payonce.payment.operation.Lifecycle;
import io.payonce.processor.Processor;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;

/**
 * An operator settles a refund to the card the processor cannot account for: UNKNOWN past the window
 * in which payonce would send it again, so that only a person who looked into it can say whether the
 * money went back to the card. As the operator settlement of a card payment, top to bottom: a
 * finished key answers from its record; the refund must be overdue and no worker may hold it; the
 * processor is asked, outside any transaction, and must confirm what the operator says (the refund
 * they name is this one, and the refund's own key holds no other; or, for not refunded, the refund's
 * key holds none and its charge was refunded exactly what payonce recorded of it); then one
 * transaction takes the order's row lock (as every change of a refund does first), claims the key,
 * moves the phase by compare-and-set (on all that was checked, so that a worker that took the refund
 * meanwhile, or a twin settlement, wins alone), records the outcome exactly as the processor's own
 * would be recorded ({@link CardRefundSettlement}: the order, the event, the refund's answer under the
 * refund's key), writes the audit row and the settlement's event, and stores the operator's answer. A
 * refusal writes nothing and leaves the key free.
 */
@ApplicationScoped
class OperatorRefundSettlement {

    /** The failure code of a refund an operator settled as not refunded: the refund's 402 names it. */
    static final String SETTLED_NOT_REFUNDED = "settled_not_refunded";

    private final Pool pool;
    private final IdempotencyGuard guard;
    private final OperatorRefundSettlementRepository settlements;
    private final CardRefundSettlement outcomes;
    private final OrderRepository orders;
    private final Processor processor;
    private final Outbox outbox;
    private final Duration window;

    OperatorRefundSettlement(Pool pool, IdempotencyGuard guard, OperatorRefundSettlementRepository settlements,
                             CardRefundSettlement outcomes, OrderRepository orders, Processor processor, Outbox outbox, Lifecycle lifecycle,
                             PayonceConfig config) {
        this.pool = pool;
        this.guard = guard;
        this.settlements = settlements;
        this.outcomes = outcomes;
        this.orders = orders;
        this.processor = processor;
        this.outbox = outbox;
        // A resend decided just inside the resend window may still be on its way, for one lease.
        this.window = config.processor().resendWithin().plus(lifecycle.lease());
    }

    /** Settles refund {@code refundId} as {@code request} says, for {@code operator}, once per key. */
    Uni<Answer> settle(Caller operator, long refundId, KeyedRequest keyed, RefundSettlementRequest request) {
        KeyedWrite write = keyed.by(operator.userId(), request);
        return guard.firstRead(write, settlements.findWithRecord(pool, refundId, write).map(found -> found.map(target -> {
            if (target == null) {
                throw new ApiException(ErrorCode.REFUND_NOT_FOUND, refundId);
            }
            return target;
        }))).flatMap(first -> first.answered() ? Uni.createFrom().item(first.stored()) : settle(first.row(), write, request));
    }

    private Uni<Answer> settle(RefundSettlementTarget target, KeyedWrite write, RefundSettlementRequest request) {
        ApiException refusal = target.refusal(window);
        if (refusal != null) {
            return Uni.createFrom().failure(refusal);
        }
        CardRefund refund = target.card();
        return askProcessor(refund, request)
                .flatMap(verdict -> guard.run(write, tx -> orders.lockById(tx, refund.orderId())
                        .flatMap(order -> record(tx, order, refund, write, request, verdict))));
    }

    /**
     * The refund under the refund's key and, for refunded, the refund the operator names; for not
     * refunded, the refund's charge and what payonce recorded refunded of it. Outside any transaction.
     */
    private Uni<RefundProcessorVerdict> askProcessor(CardRefund refund, RefundSettlementRequest request) {
        if (request.refunded()) {
            return processor.refundUnder(refund.processorKey()).flatMap(underKey -> processor.refundById(request.processorRefundId())
                    .map(named -> RefundProcessorVerdict.refunded(refund, request.processorRefundId(), underKey, named)));
        }
        // The charge's total proves nothing while the processor contradicts a refund of it payonce recorded:
        // a succeeded refund it later failed lowers its total by as much as this one, made, raises it.
        // Then payonce's total first: a refund of the charge that succeeds meanwhile shows at the processor
        // alone, and refuses; read the other way round, one recorded meanwhile could stand in for this one.
        return settlements.recordedOfCharge(pool, refund).invoke(recorded -> {
            if (recorded.contradictions() > 0) {
                throw new ApiException(ErrorCode.PROCESSOR_DISAGREES, "the processor contradicted " + recorded.contradictions()
                        + " of the refunds payonce recorded of charge " + refund.chargeId() + ": reconcile them with the processor first");
            }
        }).flatMap(recorded -> processor.refundUnder(refund.processorKey())
                .flatMap(underKey -> processor.chargeById(refund.chargeId())
                        .map(charge -> RefundProcessorVerdict.notRefunded(refund, underKey, charge, recorded.refunded()))));
    }

    private Uni<Answer> record(SqlConnection tx, Order order, CardRefund refund, KeyedWrite write, RefundSettlementRequest request,
                               RefundProcessorVerdict verdict) {
        Uni<Boolean> moved = request.refunded()
                ? settlements.succeed(tx, refund, request.processorRefundId(), window)
                : settlements.fail(tx, refund, SETTLED_NOT_REFUNDED, window);
        return moved.flatMap(settled -> settled
                ? recordSettled(tx, order, refund, write, request, verdict)
                : settlements.find(tx, refund.id()).map(now -> {
                    ApiException refusal = now.refusalSince(refund.attempts(), window);
                    throw refusal != null ? refusal : new ApiException(ErrorCode.WORKER_HOLDS_LEASE, "refund " + refund.id());
                }));
    }

    private Uni<Answer> recordSettled(SqlConnection tx, Order order, CardRefund refund, KeyedWrite write, RefundSettlementRequest request,
                                      RefundProcessorVerdict verdict) {
        String operator = write.scope();
        RefundPhase phase = request.refunded() ? RefundPhase.SUCCEEDED : RefundPhase.FAILED;
        Uni<Answer> refundsAnswer = request.refunded()
                ? outcomes.succeeded(tx, refund, order, "refund " + request.processorRefundId() + ", settled by an operator", null)
                : outcomes.failed(tx, refund, SETTLED_NOT_REFUNDED, SETTLED_NOT_REFUNDED + ", settled by an operator", null);
        return refundsAnswer
                .flatMap(v -> settlements.insertAudit(tx, refund.id(), operator, write.key().value(), request, verdict.said()))
                .flatMap(v -> outbox.recordRefundSettlement(tx, refund.userId(), refund.orderId(), EntryType.referenceOf(refund.id()),
                        refund.amount(), refund.currency(), write.key().value(), request.outcome().text()))
                .replaceWith(Answer.created(new RefundSettlementView(refund.id(), refund.orderId(), phase, request.outcome(),
                        request.processorRefundId(), request.reason(), operator, verdict.said())));
    }
}
