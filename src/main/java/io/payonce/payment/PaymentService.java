package io.payonce.payment;

import io.payonce.account.EntryType;
import io.payonce.account.Ledger;
import io.payonce.api.Answer;
import io.payonce.api.ApiException;
import io.payonce.api.Caller;
import io.payonce.api.DuplicateKey;
import io.payonce.api.ErrorCode;
import io.payonce.idempotency.Detached;
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
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;


/**
 * The pay pipeline, in the order of the design: lock, then one transaction that claims the key,
 * moves the order UNPAID→PAID by compare-and-set, records the payment, debits the account with its
 * ledger line and stores the answer; then the lock is released.
 */
@ApplicationScoped
public class PaymentService {

    static final String PAY = "pay";

    private final Pool pool;
    private final PayLock lock;
    private final IdempotencyGuard guard;
    private final OrderService orderService;
    private final OrderRepository orders;
    private final PaymentRepository payments;
    private final Ledger ledger;
    private final PayonceMetrics metrics;

    public PaymentService(Pool pool, PayLock lock, IdempotencyGuard guard, OrderService orderService, OrderRepository orders,
                          PaymentRepository payments, Ledger ledger, PayonceMetrics metrics) {
        this.pool = pool;
        this.lock = lock;
        this.guard = guard;
        this.orderService = orderService;
        this.orders = orders;
        this.payments = payments;
        this.ledger = ledger;
        this.metrics = metrics;
    }

    /**
     * Pays the order's own amount: a pay request carries no body, so nothing in it can disagree with
     * the order. Only the owner may pay, checked before the lock is taken, so that a stranger looping
     * on someone's order id neither holds the owner's lock nor stores anything under that order.
     * Once the lock is taken, the pipeline runs to its end even if the client disconnects: the lock
     * is released only after the transaction has committed or rolled back.
     */
    public Uni<Answer> pay(Caller caller, long orderId, IdempotencyKey key, String instance) {
        IdempotentCommand command = guard.command(caller.userId(), key, PAY, "order:" + orderId, null, instance);
        return orderService.findOwn(pool, caller, orderId)
                .flatMap(owned -> Detached.toTheEnd(lock.acquire(orderId)
                        .flatMap(handle -> handle.heldByAnother()
                                ? replayOrWait(command)
                                : guard.run(command, tx -> payOnce(tx, caller, orderId, key)).eventually(() -> lock.release(handle)))));
    }

    /** A twin holds the lock: a key that already has its answer replays it, any other request is told to retry. */
    private Uni<Answer> replayOrWait(IdempotentCommand command) {
        return guard.storedAnswer(command).map(stored -> {
            if (stored == null) {
                metrics.duplicateCaught(PAY, DuplicateLayer.LOCK);
                throw new ApiException(ErrorCode.PAYMENT_IN_PROGRESS);
            }
            return stored;
        });
    }

    private Uni<Result> payOnce(SqlConnection tx, Caller caller, long orderId, IdempotencyKey key) {
        return orderService.findOwn(tx, caller, orderId).flatMap(order -> markPaid(tx, order, key));
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
}
