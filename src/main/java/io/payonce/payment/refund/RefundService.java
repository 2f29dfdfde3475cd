package io.payonce.payment.refund;

import io.payonce.account.EntryType;
import io.payonce.account.Ledger;
import io.payonce.auth.Caller;
import io.payonce.db.UniqueKey;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.events.EventType;
import io.payonce.events.Method;
import io.payonce.events.Outbox;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.Begun;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.KeyedRequest;
import io.payonce.idempotency.KeyedWrite;
import io.payonce.metrics.RepeatDefence;
import io.payonce.order.Order;
import io.payonce.order.OrderAccess;
import io.payonce.order.OrderRepository;
import io.payonce.order.OrderStatus;
import io.payonce.payment.PaymentMethod;
import io.payonce.payment.operation.Lifecycle;
import io.payonce.payment.refund.RefundRepository.PaidBy;
import io.payonce.processor.ProcessorKeys;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.Map;

/**
 * Partial and full refunds under the request's key, for both edges (HTTP and refund commands). The
 * first transaction claims the key, locks the order row and records the refund under its refund
 * number, then goes where the order's money came from. A refund of a balance payment is done there
 * and then: its amount added to the order's refunded total within the cap, the account credited with
 * its ledger line, the event written. A refund of a card payment reserves its amount on the order
 * within the same cap and commits STARTED; the refund then goes to the processor outside any
 * transaction, under its own processor key, and its outcome settles it ({@link RefundToCard}).
 */
@ApplicationScoped
public class RefundService {

    private final Pool pool;
    private final IdempotencyGuard guard;
    private final OrderAccess access;
    private final OrderRepository orders;
    private final RefundRepository refunds;
    private final CardRefundRepository cardRefunds;
    private final RefundToCard toCard;
    private final Lifecycle lifecycle;
    private final ProcessorKeys processorKeys;
    private final Ledger ledger;
    private final Outbox outbox;

    RefundService(Pool pool, IdempotencyGuard guard, OrderAccess access, OrderRepository orders, RefundRepository refunds,
                  CardRefundRepository cardRefunds, RefundToCard toCard, Lifecycle lifecycle, ProcessorKeys processorKeys, Ledger ledger, Outbox outbox) {
        this.pool = pool;
        this.guard = guard;
        this.access = access;
        this.orders = orders;
        this.refunds = refunds;
        this.cardRefunds = cardRefunds;
        this.toCard = toCard;
        this.lifecycle = lifecycle;
        this.processorKeys = processorKeys;
        this.ledger = ledger;
        this.outbox = outbox;
    }

    /**
     * Refunds {@code refund.amount()} of order {@code orderId} once per key and once per refund number.
     * Once begun, a refund to the card runs to its outcome even if the client goes away.
     */
    public Uni<Answer> refund(Caller caller, KeyedRequest request, long orderId, RefundRequest refund) {
        KeyedWrite write = request.by(caller.userId(), refund);
        return guard.<CardRefund>begin(write, tx -> start(tx, caller, orderId, refund, write),
                begun -> lifecycle.proceed(toCard, begun, write, () -> cardRefunds.findByOrderAndNo(pool, orderId, refund.refundNo())));
    }

    private Uni<Begun<CardRefund>> start(SqlConnection tx, Caller caller, long orderId, RefundRequest refund, KeyedWrite write) {
        return access.lock(tx, caller, orderId).flatMap(order -> refunds.findPayment(tx, order.id()).flatMap(paidBy -> paidBy != null
                && paidBy.method() == PaymentMethod.CARD
                ? startToCard(tx, order, paidBy, refund, write)
                : toBalance(tx, order, refund, write).map(Begun::<CardRefund>answered)));
    }

    /** A refund of a balance payment, or of an order not paid yet, which the cap then refuses as it always did. */
    private Uni<Answer> toBalance(SqlConnection tx, Order order, RefundRequest refund, KeyedWrite write) {
        return UniqueKey.insertOr(refunds.insertRefund(tx, order, refund.refundNo(), refund.amount())
                        .flatMap(made -> addWithinCap(tx, order, made, write.key().value())),
                () -> existingRefund(tx, order, refund));
    }

    private Uni<Answer> addWithinCap(SqlConnection tx, Order order, Refund refund, String key) {
        return orders.addRefund(tx, order.id(), refund.amount()).flatMap(added -> {
            if (!added) {
                return Uni.createFrom().failure(beyondCap(order, refund.amount()));
            }
            String reference = EntryType.referenceOf(refund.id());
            return ledger.credit(tx, order.userId(), order.currency(), refund.amount(), EntryType.REFUND, reference)
                    .flatMap(credited -> outbox.record(tx, EventType.REFUND_CREATED, Method.BALANCE, order.userId(), order.id(), reference,
                            refund.amount(), order.currency(), key))
                    .flatMap(recorded -> orders.findById(tx, order.id()))
                    .map(after -> Answer.created(RefundView.of(refund, after)));
        });
    }

    /**
     * The first transaction of a refund to the card: the refund STARTED under its derived processor
     * key, its amount reserved on the order within the cap. The buyer's account plays no part: the
     * money goes back to the card it came from, whatever the buyer holds at payonce.
     */
    private Uni<Begun<CardRefund>> startToCard(SqlConnection tx, Order order, PaidBy paidBy, RefundRequest refund, KeyedWrite write) {
        if (paidBy.chargeId() == null) {
            // Charged under an id the processor wrote in characters or at a length payonce cannot keep exactly:
            // no refund can name that charge to the processor.
            return Uni.createFrom().failure(new ApiException(ErrorCode.CHARGE_NOT_RECORDED, order.id(), order.id()));
        }
        String processorKey = processorKeys.refund(write.scope(), write.key().value(), paidBy.chargeId(), refund.refundNo());
        return UniqueKey.insertOr(cardRefunds.insertStarted(tx, order, refund.refundNo(), refund.amount(), write.scope(), write.key(),
                                processorKey, paidBy.chargeId(), lifecycle.lease())
                        .call(started -> orders.reserveRefund(tx, order.id(), refund.amount()).invoke(reserved -> {
                            if (!reserved) {
                                throw beyondCap(order, refund.amount());
                            }
                        }))
                        .call(started -> cardRefunds.recordPhase(tx, started.id(), RefundPhase.STARTED.name(), null, null))
                        .map(Begun::started),
                () -> existingRefund(tx, order, refund).map(Begun::answered));
    }

    /**
     * The refund number was used before. The same refund is a repeat and answers with itself once it
     * succeeded; one that failed answers its failure, since the number is spent; one still waiting for
     * the processor is to be asked about again later. Another amount is a conflict.
     */
    private Uni<Answer> existingRefund(SqlConnection tx, Order order, RefundRequest request) {
        return refunds.findRefund(tx, order.id(), request.refundNo()).map(refund -> {
            if (refund.amount() != request.amount()) {
                throw new ApiException(ErrorCode.REFUND_NO_CONFLICT, request.refundNo());
            }
            return switch (refund.phase()) {
                case SUCCEEDED -> Answer.created(RefundView.of(refund, order)).repeatCaughtBy(RepeatDefence.UNIQUE_INDEX);
                case FAILED -> throw Refund.failure(refund.id(), refund.failureCode());
                case STARTED, SENT, UNKNOWN -> throw new ApiException(ErrorCode.REFUND_PENDING);
            };
        });
    }

    /** A refund past the cap is told how much remains refundable, 0 once the order is fully refunded. */
    private static ApiException beyondCap(Order order, long amount) {
        if (order.status() != OrderStatus.REFUNDED && !order.status().canBecome(OrderStatus.REFUNDED)) {
            return order.illegalTransitionTo(OrderStatus.REFUNDED);
        }
        long refundable = order.amount() - order.refundedAmount();
        return new ApiException(ErrorCode.REFUND_EXCEEDS_PAYMENT, Map.of("refundable", refundable),
                amount, order.id(), order.amount(), refundable);
    }
}
