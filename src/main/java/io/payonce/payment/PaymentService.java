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
import io.payonce.idempotency.IdempotentCommand;
import io.payonce.idempotency.Result;
import io.payonce.lock.PayLock;
import io.payonce.metrics.DuplicateLayer;
import io.payonce.metrics.PayonceMetrics;
import io.payonce.order.Order;
import io.payonce.order.OrderRepository;
import io.payonce.order.OrderService;
import io.payonce.order.OrderStatus;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.util.Map;

/**
 * The pay pipeline, in the order of the design: lock, then one transaction that claims the key,
 * moves the order UNPAID→PAID by compare-and-set, records the payment, debits the account with its
 * ledger line and stores the answer; then the lock is released.
 */
@ApplicationScoped
public class PaymentService {

    static final String PAY = "pay";

    private static final Logger LOG = Logger.getLogger(PaymentService.class);

    private final PayLock lock;
    private final IdempotencyGuard guard;
    private final OrderService orderService;
    private final OrderRepository orders;
    private final PaymentRepository payments;
    private final Ledger ledger;
    private final PayonceMetrics metrics;

    public PaymentService(PayLock lock, IdempotencyGuard guard, OrderService orderService, OrderRepository orders,
                          PaymentRepository payments, Ledger ledger, PayonceMetrics metrics) {
        this.lock = lock;
        this.guard = guard;
        this.orderService = orderService;
        this.orders = orders;
        this.payments = payments;
        this.ledger = ledger;
        this.metrics = metrics;
    }

    public Uni<Answer> pay(Caller caller, long orderId, IdempotencyKey key, PayRequest request, String instance) {
        IdempotentCommand command = guard.command(caller.userId(), key, PAY, "order:" + orderId, request, instance);
        return lock.acquire(orderId)
                .flatMap(handle -> {
                    if (handle.heldByAnother()) {
                        metrics.duplicateCaught(PAY, DuplicateLayer.LOCK);
                        return Uni.createFrom().failure(new ApiException(ErrorCode.PAYMENT_IN_PROGRESS));
                    }
                    return guard.run(command, tx -> payOnce(tx, caller, orderId, key, request))
                            .eventually(() -> lock.release(handle));
                })
                .invoke(answer -> LOG.infof("Pay order %d key %s: %d%s", orderId, key.value(), answer.status(),
                        answer.replayed() ? " (replayed)" : ""));
    }

    private Uni<Result> payOnce(SqlConnection tx, Caller caller, long orderId, IdempotencyKey key, PayRequest request) {
        return orderService.find(tx, caller, orderId)
                .invoke(order -> requireExpectedAmount(order, request))
                .flatMap(order -> markPaid(tx, order, key));
    }

    private Uni<Result> markPaid(SqlConnection tx, Order order, IdempotencyKey key) {
        return orders.compareAndSetStatus(tx, order.id(), OrderStatus.UNPAID, OrderStatus.PAID)
                .flatMap(moved -> moved ? recordPayment(tx, order, key) : alreadyPaid(tx, order.id(), DuplicateLayer.STATE_CAS));
    }

    private Uni<Result> recordPayment(SqlConnection tx, Order order, IdempotencyKey key) {
        return payments.insertPayment(tx, order, key)
                .onFailure(DuplicateKey::is).recoverWithNull()
                .flatMap(paymentId -> paymentId == null
                        ? alreadyPaid(tx, order.id(), DuplicateLayer.UNIQUE_INDEX)
                        : deduct(tx, order, paymentId));
    }

    /** Insufficient funds fails here; the guard then rolls back to its savepoint and records the 402. */
    private Uni<Result> deduct(SqlConnection tx, Order order, long paymentId) {
        return ledger.debit(tx, order.userId(), order.currency(), order.amount(), EntryType.PAYMENT, Long.toString(paymentId))
                .replaceWith(Result.created(PaymentView.charged(paymentId, order)));
    }

    /** The order had moved on: answer with its payment, or refuse if it was never paid. */
    private Uni<Result> alreadyPaid(SqlConnection tx, long orderId, DuplicateLayer layer) {
        return payments.findPayment(tx, orderId).flatMap(payment -> {
            if (payment == null) {
                return orders.findById(tx, orderId).map(current -> {
                    throw current.illegalTransitionTo(OrderStatus.PAID);
                });
            }
            metrics.duplicateCaught(PAY, layer);
            return Uni.createFrom().item(Result.ok(PaymentView.existing(payment)));
        });
    }

    private static void requireExpectedAmount(Order order, PayRequest request) {
        if (request != null && request.expectedAmount() != null && request.expectedAmount() != order.amount()) {
            throw new ApiException(ErrorCode.AMOUNT_MISMATCH, Map.of("orderAmount", order.amount()),
                    order.amount(), request.expectedAmount());
        }
    }
}
