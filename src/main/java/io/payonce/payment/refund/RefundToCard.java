package io.payonce.payment.refund;

import io.payonce.account.EntryType;
import io.payonce.config.PayonceConfig;
import io.payonce.db.Transactions;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.events.EventType;
import io.payonce.events.Method;
import io.payonce.events.Outbox;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.KeyAnswers;
import io.payonce.order.Order;
import io.payonce.order.OrderRepository;
import io.payonce.order.OrderStatus;
import io.payonce.payment.operation.OperationKind;
import io.payonce.processor.Processor;
import io.payonce.processor.RefundOutcome;
import io.payonce.processor.RefundRequest;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.inject.Singleton;

/**
 * The refund to the card as a kind of processor operation ({@link OperationKind}): a refund of the
 * payment's charge and a lookup, under the refund's own processor key. SUCCEEDED writes the refund's
 * event, and makes the order REFUNDED once its refunds add up to its amount and none of them waits
 * any more; FAILED gives the refund's reservation back to the order and stores the 402. A definite
 * outcome takes the order's row lock first, as the refund's first transaction did: two refunds of
 * one order settling at once see each other.
 */
@Singleton
public class RefundToCard extends OperationKind<CardRefund, RefundOutcome, Order> {

    private static final Words WORDS = new Words("Refund to the card", "refund", "refund", ErrorCode.REFUND_PENDING,
            "payonce.card.refunds.overdue", "Refunds to the card still not settled a minute after they began (the processor is "
                    + "down or gives no definite answer), as the recovery job last counted");

    private final Processor processor;
    private final CardRefundRepository cardRefunds;
    private final OrderRepository orders;
    private final Outbox outbox;

    RefundToCard(Processor processor, Pool pool, Transactions transactions, CardRefundRepository cardRefunds, OrderRepository orders,
                 Outbox outbox, KeyAnswers keys, PayonceConfig config) {
        super(WORDS, pool, transactions, cardRefunds, keys, config.processor().recoveryBackoffMax());
        this.processor = processor;
        this.cardRefunds = cardRefunds;
        this.orders = orders;
        this.outbox = outbox;
    }

    @Override
    protected Uni<RefundOutcome> send(CardRefund refund) {
        return processor.refund(refund.processorKey(),
                new RefundRequest(refund.chargeId(), refund.amount(), refund.currency(), refund.reference()));
    }

    @Override
    protected Uni<RefundOutcome> lookUp(CardRefund refund) {
        return processor.refundUnder(refund.processorKey());
    }

    @Override
    protected Uni<Order> lockFor(SqlConnection tx, CardRefund refund) {
        return orders.lockById(tx, refund.orderId());
    }

    /** The refund with the order as it stands now. */
    @Override
    protected Uni<Answer> accepted(SqlClient client, CardRefund refund) {
        return orders.findById(client, refund.orderId()).map(order -> Answer.accepted(refund.view(order), RefundView.location(refund.id())));
    }

    /** A refund that succeeded, under the order's row lock ({@code order} as locked): the order, its event and its 201. */
    @Override
    protected Uni<Answer> succeeded(SqlConnection tx, CardRefund refund, Order order) {
        return refundedInFull(tx, order)
                .flatMap(v -> outbox.record(tx, EventType.REFUND_CREATED, Method.CARD, refund.userId(), refund.orderId(),
                        EntryType.referenceOf(refund.id()), refund.amount(), refund.currency(), refund.key().value()))
                .flatMap(v -> orders.findById(tx, refund.orderId()))
                .map(after -> Answer.created(refund.in(RefundPhase.SUCCEEDED).view(after)));
    }

    /**
     * The order becomes REFUNDED when its refunds have reached its amount and every one of them has
     * succeeded: the total counts the reservations of refunds still in flight, and one of them may
     * yet fail. Read under the order's row lock, which each refund's every change takes first, so the
     * last of several refunds to settle is the one that sees them all settled.
     */
    private Uni<Void> refundedInFull(SqlConnection tx, Order order) {
        if (order.refundedAmount() != order.amount() || !order.status().canBecome(OrderStatus.REFUNDED)) {
            return Uni.createFrom().voidItem();
        }
        return cardRefunds.countUnsettled(tx, order.id()).flatMap(unsettled -> unsettled == 0
                ? orders.compareAndSetStatus(tx, order.id(), order.status(), OrderStatus.REFUNDED).replaceWithVoid()
                : Uni.createFrom().voidItem());
    }

    /** A refund that failed, under the order's row lock: its reservation given back to the order, and its 402. */
    @Override
    protected Uni<Answer> failed(SqlConnection tx, CardRefund refund, Order order, String failureCode) {
        ApiException refusal = Refund.failure(refund.id(), failureCode);
        return orders.releaseRefund(tx, refund.orderId(), refund.amount()).map(released -> {
            if (!released) {
                throw new IllegalStateException("Order " + refund.orderId() + " held no reservation for refund " + refund.id());
            }
            return Answer.problem(refusal, "/orders/" + refund.orderId() + "/refunds");
        });
    }
}
