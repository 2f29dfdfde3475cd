package io.payonce.payment.refund;

import io.payonce.account.EntryType;
import io.payonce.account.Ledger;
import io.payonce.auth.Caller;
import io.payonce.db.UniqueKey;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.events.EventType;
import io.payonce.events.Outbox;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.KeyedRequest;
import io.payonce.metrics.RepeatDefence;
import io.payonce.order.Order;
import io.payonce.order.OrderAccess;
import io.payonce.order.OrderRepository;
import io.payonce.order.OrderStatus;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.Map;

/**
 * Partial and full refunds, in one transaction under the request's key: lock the order row, record
 * the refund under its refund number, add it to the order's refunded total within the cap, credit
 * the account with its ledger line and write the refund's event.
 */
@ApplicationScoped
public class RefundService {

    private final IdempotencyGuard guard;
    private final OrderAccess access;
    private final OrderRepository orders;
    private final RefundRepository refunds;
    private final Ledger ledger;
    private final Outbox outbox;

    RefundService(IdempotencyGuard guard, OrderAccess access, OrderRepository orders, RefundRepository refunds, Ledger ledger,
                  Outbox outbox) {
        this.guard = guard;
        this.access = access;
        this.orders = orders;
        this.refunds = refunds;
        this.ledger = ledger;
        this.outbox = outbox;
    }

    public Uni<Answer> refund(Caller caller, KeyedRequest request, long orderId, RefundRequest refund) {
        return guard.run(request.by(caller.userId(), refund), tx -> access.lock(tx, caller, orderId)
                .flatMap(order -> UniqueKey.insertOr(
                        refunds.insertRefund(tx, order, refund.refundNo(), refund.amount())
                                .flatMap(made -> addWithinCap(tx, order, made, request.key().value())),
                        () -> existingRefund(tx, order, refund))));
    }

    private Uni<Answer> addWithinCap(SqlConnection tx, Order order, Refund refund, String key) {
        return orders.addRefund(tx, order.id(), refund.amount()).flatMap(added -> {
            if (!added) {
                return Uni.createFrom().failure(beyondCap(order, refund.amount()));
            }
            String reference = EntryType.referenceOf(refund.id());
            return ledger.credit(tx, order.userId(), order.currency(), refund.amount(), EntryType.REFUND, reference)
                    .flatMap(credited -> outbox.record(tx, EventType.REFUND_CREATED, order.userId(), order.id(), reference,
                            refund.amount(), order.currency(), key))
                    .flatMap(recorded -> orders.findById(tx, order.id()))
                    .map(after -> Answer.created(RefundView.of(refund, after)));
        });
    }

    /** The refund number was used before: the same refund is a repeat and answers with itself, another amount is a conflict. */
    private Uni<Answer> existingRefund(SqlConnection tx, Order order, RefundRequest request) {
        return refunds.findRefund(tx, order.id(), request.refundNo()).map(refund -> {
            if (refund.amount() != request.amount()) {
                throw new ApiException(ErrorCode.REFUND_NO_CONFLICT, request.refundNo());
            }
            return Answer.created(RefundView.of(refund, order)).repeatCaughtBy(RepeatDefence.UNIQUE_INDEX);
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
