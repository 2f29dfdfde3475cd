package io.payonce.payment;

import io.payonce.account.EntryType;
import io.payonce.account.Ledger;
import io.payonce.api.Answer;
import io.payonce.api.ApiException;
import io.payonce.api.Caller;
import io.payonce.api.DuplicateKey;
import io.payonce.api.ErrorCode;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.IdempotencyKey;
import io.payonce.idempotency.Result;
import io.payonce.metrics.DuplicateLayer;
import io.payonce.metrics.PayonceMetrics;
import io.payonce.order.Order;
import io.payonce.order.OrderRepository;
import io.payonce.order.OrderService;
import io.payonce.order.OrderStatus;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.Map;

/**
 * Partial and full refunds, in one transaction under the request's Idempotency-Key: lock the order
 * row, record the refund under its refund number, add it to the order's refunded total within the
 * cap, credit the account with its ledger line.
 */
@ApplicationScoped
public class RefundService {

    static final String REFUND = "refund";

    private final IdempotencyGuard guard;
    private final OrderService orderService;
    private final OrderRepository orders;
    private final PaymentRepository payments;
    private final Ledger ledger;
    private final PayonceMetrics metrics;

    public RefundService(IdempotencyGuard guard, OrderService orderService, OrderRepository orders, PaymentRepository payments,
                         Ledger ledger, PayonceMetrics metrics) {
        this.guard = guard;
        this.orderService = orderService;
        this.orders = orders;
        this.payments = payments;
        this.ledger = ledger;
        this.metrics = metrics;
    }

    public Uni<Answer> refund(Caller caller, long orderId, IdempotencyKey key, RefundRequest request, String instance) {
        var command = guard.command(caller.userId(), key, REFUND, "order:" + orderId, request, instance);
        return guard.run(command, tx -> refundOnce(tx, caller, orderId, request));
    }

    private Uni<Result> refundOnce(SqlConnection tx, Caller caller, long orderId, RefundRequest request) {
        return orderService.lock(tx, caller, orderId)
                .flatMap(order -> payments.insertRefund(tx, order, request.refundNo(), request.amount())
                        .flatMap(refund -> addWithinCap(tx, order, refund))
                        .onFailure(DuplicateKey::is).recoverWithUni(() -> existingRefund(tx, order, request)));
    }

    private Uni<Result> addWithinCap(SqlConnection tx, Order order, Refund refund) {
        return orders.addRefund(tx, order.id(), refund.amount()).flatMap(added -> {
            if (!added) {
                return Uni.createFrom().failure(beyondCap(order, refund.amount()));
            }
            return ledger.credit(tx, order.userId(), order.currency(), refund.amount(), EntryType.REFUND, Long.toString(refund.id()))
                    .flatMap(credited -> orders.findById(tx, order.id()))
                    .map(after -> Result.created(RefundView.of(refund, after)));
        });
    }

    /** The refund number was used before: the same refund answers with itself, another amount is a conflict. */
    private Uni<Result> existingRefund(SqlConnection tx, Order order, RefundRequest request) {
        return payments.findRefund(tx, order.id(), request.refundNo()).map(refund -> {
            if (refund.amount() != request.amount()) {
                throw new ApiException(ErrorCode.REFUND_NO_CONFLICT, request.refundNo());
            }
            metrics.duplicateCaught(REFUND, DuplicateLayer.UNIQUE_INDEX);
            return Result.ok(RefundView.of(refund, order));
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
