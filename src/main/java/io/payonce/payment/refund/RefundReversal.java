package io.payonce.payment.refund;

import io.payonce.account.EntryType;
import io.payonce.auth.Caller;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.events.EventType;
import io.payonce.events.Outbox;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.KeyedRequest;
import io.payonce.idempotency.KeyedWrite;
import io.payonce.order.Order;
import io.payonce.order.OrderRepository;
import io.payonce.payment.operation.SettlementTarget;
import io.payonce.payment.operation.Verdicts;
import io.payonce.processor.Processor;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * An operator reverses a refund to the card the processor failed after it had succeeded: payonce
 * recorded the money as gone back to the card, and kept the processor's later {@code refund.failed}
 * as CONTRADICTING, since no event may undo a definite outcome by itself. A keyed write, top to bottom:
 * a finished key answers from its record; the refund must be a refund to the card that SUCCEEDED
 * under an id the processor named; the processor, asked by that id outside any transaction, must
 * say that very refund failed; then one transaction, under the order's row lock as every change of a
 * refund takes it, moves the refund SUCCEEDED→FAILED by compare-and-set, gives its amount back to
 * the order (a REFUNDED order becomes what it was refunded from) and writes the audit row and a
 * {@code refund.reversed} event. The refund's key keeps the 201 it answered: a repeat gets the first
 * answer, and {@code GET /refunds/{id}} shows the refund as it stands. A refusal writes nothing.
 */
@ApplicationScoped
public class RefundReversal {

    /** How much of what the processor said the audit row keeps. */
    private static final int MOST_SAID = 1000;

    private final Pool pool;
    private final IdempotencyGuard guard;
    private final OperatorRefundSettlementRepository refunds;
    private final CardRefundRepository cardRefunds;
    private final OrderRepository orders;
    private final Processor processor;
    private final Outbox outbox;

    RefundReversal(Pool pool, IdempotencyGuard guard, OperatorRefundSettlementRepository refunds, CardRefundRepository cardRefunds,
                   OrderRepository orders, Processor processor, Outbox outbox) {
        this.pool = pool;
        this.guard = guard;
        this.refunds = refunds;
        this.cardRefunds = cardRefunds;
        this.orders = orders;
        this.processor = processor;
        this.outbox = outbox;
    }

    /** Reverses refund {@code id}, for {@code operator}, once per key. */
    public Uni<Answer> reverse(Caller operator, long id, KeyedRequest keyed, RefundReversalRequest request) {
        KeyedWrite write = keyed.by(operator.userId(), request);
        return guard.firstRead(write, refunds.findWithRecord(pool, id, write, ErrorCode.REFUND_NOT_FOUND), target -> reverse(target, write, request));
    }

    private Uni<Answer> reverse(SettlementTarget<CardRefund> target, KeyedWrite write, RefundReversalRequest request) {
        CardRefund refund = target.operation();
        if (refund == null || refund.phase() != RefundPhase.SUCCEEDED || refund.processorRefundId() == null) {
            return Uni.createFrom().failure(notReversible(target));
        }
        return processor.refundById(refund.processorRefundId()).flatMap(byId -> {
            String said = Verdicts.kept(RefundProcessorVerdict.reversed(refund, byId), MOST_SAID);
            String failureCode = byId.failureCode();
            return guard.run(write, tx -> orders.lockById(tx, refund.orderId()).flatMap(order -> refunds.reverse(tx, refund.id(), failureCode)
                    .flatMap(reversed -> reversed
                            ? recorded(tx, refund, order, failureCode, write, request, said)
                            : refunds.find(tx, refund.id()).map(now -> {
                                throw notReversible(now);
                            }))));
        });
    }

    /** Under the order's row lock, once the refund moved to FAILED: its amount back to the order, the audit row, the event, the answer. */
    private Uni<Answer> recorded(SqlConnection tx, CardRefund refund, Order before, String failureCode, KeyedWrite write,
                                 RefundReversalRequest request, String said) {
        return cardRefunds.recordPhase(tx, refund.id(), RefundPhase.FAILED.name(), "reversed by operator " + write.scope() + ": " + failureCode, null)
                .flatMap(v -> orders.reverseRefund(tx, before.id(), refund.amount()))
                .invoke(given -> {
                    if (!given) {
                        throw new IllegalStateException("Order " + before.id() + " did not count refund " + refund.id() + " as refunded");
                    }
                })
                .flatMap(v -> orders.findById(tx, before.id()))
                .call(after -> refunds.insertReversal(tx, refund.id(), write, request.reason(), said, before.status(), after.status()))
                .call(after -> outbox.recordSettlement(tx, EventType.REFUND_REVERSED, refund.userId(), refund.orderId(),
                        EntryType.referenceOf(refund.id()), refund.amount(), refund.currency(), write.key().value(), "reversed"))
                .map(after -> Answer.created(new RefundReversalView(refund.id(), refund.orderId(), RefundPhase.FAILED, failureCode,
                        refund.processorRefundId(), after.status(), after.amount() - after.refundedAmount(), request.reason(), write.scope(), said)));
    }

    private static ApiException notReversible(SettlementTarget<CardRefund> target) {
        CardRefund refund = target.operation();
        String standing = refund == null ? "a refund to the balance"
                : refund.phase() == RefundPhase.SUCCEEDED && refund.processorRefundId() == null ? "SUCCEEDED under an id payonce could not keep"
                : target.shownPhase();
        return new ApiException(ErrorCode.REFUND_NOT_REVERSIBLE, target.subject(), standing);
    }
}
