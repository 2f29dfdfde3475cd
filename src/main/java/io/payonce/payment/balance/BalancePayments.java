package io.payonce.payment.balance;

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
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.KeyedRequest;
import io.payonce.idempotency.KeyedWrite;
import io.payonce.idempotency.Turn;
import io.payonce.lock.PayLock;
import io.payonce.metrics.RepeatDefence;
import io.payonce.order.Order;
import io.payonce.order.OrderAccess;
import io.payonce.order.OrderRepository;
import io.payonce.order.OrderStatus;
import io.payonce.payment.PaidOrders;
import io.payonce.payment.PaymentMethod;
import io.payonce.payment.PaymentPhase;
import io.payonce.payment.PaymentView;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * The pay pipeline, one method per step, in the order they run: read the caller's own order and,
 * in the same statement, any answer already stored under the key; lock the order in Redis; in one
 * transaction claim the key, move the order UNPAID→PAID by compare-and-set, record the payment,
 * deduct the amount with its ledger line and its event, and store the answer; then release the
 * lock. Each step that finds the payment already made answers with it as a repeat.
 */
@ApplicationScoped
public class BalancePayments {

    private final Pool pool;
    private final PayLock lock;
    private final IdempotencyGuard guard;
    private final OrderAccess access;
    private final OrderRepository orders;
    private final BalancePaymentRepository payments;
    private final Ledger ledger;
    private final Outbox outbox;
    private final PaidOrders paidOrders;
    private final PipelinedBalancePay pipelined;

    BalancePayments(Pool pool, PayLock lock, IdempotencyGuard guard, OrderAccess access, OrderRepository orders,
                   BalancePaymentRepository payments, Ledger ledger, Outbox outbox, PaidOrders paidOrders, PipelinedBalancePay pipelined) {
        this.pool = pool;
        this.lock = lock;
        this.guard = guard;
        this.access = access;
        this.orders = orders;
        this.payments = payments;
        this.ledger = ledger;
        this.outbox = outbox;
        this.paidOrders = paidOrders;
        this.pipelined = pipelined;
    }

    /**
     * Pays the order's own amount: a pay request carries no body, so nothing in it can disagree with
     * the order. Only the owner may pay, checked before the lock is taken, so that a stranger looping
     * on someone's order id neither holds the owner's lock nor stores anything under that order.
     * The order and the key's record are one read: a key that already has its answer is answered from
     * it, without lock or transaction.
     */
    public Uni<Answer> pay(Caller caller, long orderId, KeyedRequest request) {
        KeyedWrite write = request.by(caller.userId(), null);
        return guard.firstRead(write, access.findOwnWithRecord(pool, caller, orderId, write), order -> lockAndPay(order, write));
    }

    /**
     * Under the order's pay lock, claim, compare-and-set, record, deduct and store in one
     * transaction; the guard claims and stores, and gives the lock back only once the transaction has
     * committed or rolled back, even if the client has disconnected (the lock's own expiry may come
     * first, for an attempt that outlives it: the claim's row then keeps a twin waiting, and the
     * compare-and-set decides). The transaction is first sent pipelined ({@link PipelinedBalancePay}),
     * then, for anything but a first pay, one statement at a time below. The order as read before
     * the lock is all this needs: its owner, amount and currency never change, and whether it may
     * still be paid is the compare-and-set's to decide.
     */
    private Uni<Answer> lockAndPay(Order order, KeyedWrite write) {
        return guard.run(write, payLock(order), pipelined.pay(order, write), tx -> compareAndSetPaid(tx, order, write));
    }

    /**
     * The order's pay lock as the write's turn: while a twin holds it, a key that already has its
     * answer replays it, and any other request is told to retry.
     */
    private Uni<Turn> payLock(Order order) {
        return lock.acquire(order.id()).map(handle -> handle.heldByAnother()
                ? Turn.refused(() -> new ApiException(ErrorCode.PAYMENT_IN_PROGRESS))
                : Turn.taken(() -> lock.release(handle)));
    }

    private Uni<Answer> compareAndSetPaid(SqlConnection tx, Order order, KeyedWrite write) {
        return orders.compareAndSetStatus(tx, order.id(), OrderStatus.UNPAID, OrderStatus.PAID)
                .flatMap(moved -> moved ? recordPayment(tx, order, write) : paidOrders.existingPayment(tx, order.id(), RepeatDefence.STATE_CAS));
    }

    private Uni<Answer> recordPayment(SqlConnection tx, Order order, KeyedWrite write) {
        return UniqueKey.insertOr(payments.insertPayment(tx, order, write.key()), () -> Uni.createFrom().nullItem())
                .flatMap(paymentId -> paymentId == null
                        ? paidOrders.existingPayment(tx, order.id(), RepeatDefence.UNIQUE_INDEX)
                        : deduct(tx, order, paymentId, write));
    }

    /**
     * The debit, its ledger line and the payment's event. Insufficient funds fails here; the guard
     * then rolls the transaction back, the event with the rest, and records the 402.
     */
    private Uni<Answer> deduct(SqlConnection tx, Order order, long paymentId, KeyedWrite write) {
        String reference = EntryType.referenceOf(paymentId);
        return ledger.debit(tx, order.userId(), order.currency(), order.amount(), EntryType.PAYMENT, reference)
                .flatMap(debited -> outbox.record(tx, EventType.PAYMENT_SUCCEEDED, Method.BALANCE, order.userId(), order.id(), reference, order.amount(),
                        order.currency(), write.key().value()))
                .replaceWith(Answer.created(paidView(paymentId, order)));
    }

    /** A balance payment is SUCCEEDED from its first commit: there is no phase to wait for. */
    static PaymentView paidView(long paymentId, Order order) {
        return new PaymentView(paymentId, order.id(), order.amount(), order.currency(), PaymentMethod.BALANCE, PaymentPhase.SUCCEEDED);
    }
}
