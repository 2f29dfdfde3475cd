package io.payonce.payment.card;

import io.payonce.auth.Caller;
import io.payonce.db.SqlErrors;
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
import io.payonce.payment.PaidOrders;
import io.payonce.payment.PayRequest;
import io.payonce.payment.PaymentPhase;
import io.payonce.payment.operation.Lifecycle;
import io.payonce.processor.ProcessorKeys;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * The card pay, in committed phases. One transaction claims the key, moves the order UNPAID→PAYING
 * by compare-and-set and records the payment STARTED; then the charge goes to the processor outside
 * any transaction, under the payment's processor key, derived from the request ({@link ProcessorKeys}):
 * a retry after the database lost the payment (a restore, a failover) meets the processor's first
 * charge under it instead of making another. Its outcome settles the payment ({@link CardCharge}).
 * A pay with another key is answered from the order's state. No Redis lock is
 * taken: the first transaction is short and the database alone decides it, and the processor call
 * holds nothing while it waits.
 */
@ApplicationScoped
public class CardPay {

    private final Pool pool;
    private final IdempotencyGuard guard;
    private final OrderAccess access;
    private final OrderRepository orders;
    private final CardPaymentRepository cards;
    private final CardCharge charge;
    private final Lifecycle lifecycle;
    private final PaidOrders paidOrders;
    private final ProcessorKeys keys;

    CardPay(Pool pool, IdempotencyGuard guard, OrderAccess access, OrderRepository orders, CardPaymentRepository cards,
            CardCharge charge, Lifecycle lifecycle, PaidOrders paidOrders, ProcessorKeys keys) {
        this.pool = pool;
        this.guard = guard;
        this.access = access;
        this.orders = orders;
        this.cards = cards;
        this.charge = charge;
        this.lifecycle = lifecycle;
        this.paidOrders = paidOrders;
        this.keys = keys;
    }

    /**
     * Pays the order's own amount with the card {@code request} names; the owner only, as a balance
     * pay. A key whose answer is stored (201, 402) is answered from it at once. Once begun, the
     * payment runs to its outcome even if the client goes away.
     */
    public Uni<Answer> pay(Caller caller, long orderId, KeyedRequest keyed, PayRequest request) {
        KeyedWrite write = keyed.by(caller.userId(), request.fingerprinted());
        return guard.firstRead(write, access.findOwnWithRecord(pool, caller, orderId, write), order -> begin(order, write, request.cardToken()));
    }

    /** The first transaction, then the charge: sent now, resumed for a retry, or the answer the transaction found. */
    private Uni<Answer> begin(Order order, KeyedWrite write, String cardToken) {
        return guard.<CardPayment>begin(write, tx -> start(tx, order, write, cardToken),
                begun -> lifecycle.proceed(charge, begun, write, () -> cards.findByOrderAndKey(pool, order.id(), write.key())));
    }

    private Uni<Begun<CardPayment>> start(SqlConnection tx, Order order, KeyedWrite write, String cardToken) {
        return orders.compareAndSetStatus(tx, order.id(), OrderStatus.UNPAID, OrderStatus.PAYING).flatMap(moved -> moved
                ? insertStarted(tx, order, write, cardToken)
                        .call(payment -> cards.recordPhase(tx, payment.id(), PaymentPhase.STARTED.name(), null, null))
                        .map(Begun::started)
                : paidOrders.existingPayment(tx, order.id(), RepeatDefence.STATE_CAS).map(Begun::answered));
    }

    /**
     * The payment, STARTED under the processor key the request derives. A row that already holds
     * the key is this very request's payment, declined, whose answer the key's record no longer
     * keeps (retention deleted it, or the database lost it and kept the payment): the request is
     * answered the 402 that payment answered, recorded under the key again, and nothing is sent.
     */
    private Uni<CardPayment> insertStarted(SqlConnection tx, Order order, KeyedWrite write, String cardToken) {
        String processorKey = keys.charge(write.scope(), write.key().value(), order.id());
        return cards.insertStarted(tx, order, write.key(), cardToken, processorKey, lifecycle.lease())
                .onFailure(SqlErrors::isDuplicateKey).recoverWithUni(taken -> cards.findDeclined(tx, processorKey)
                        .onItem().ifNull().failWith(taken)
                        .flatMap(declined -> Uni.createFrom().<CardPayment>failure(declined)));
    }
}
