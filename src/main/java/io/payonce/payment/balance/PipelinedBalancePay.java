package io.payonce.payment.balance;

import io.payonce.account.EntryType;
import io.payonce.account.Ledger;
import io.payonce.db.PipelinedTransactions;
import io.payonce.events.EventType;
import io.payonce.events.Method;
import io.payonce.events.Outbox;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.KeyAnswers;
import io.payonce.idempotency.KeyedWrite;
import io.payonce.order.Order;
import io.payonce.order.OrderRepository;
import io.payonce.order.OrderStatus;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * A first balance pay in two flights and a COMMIT: the statements of the sequential pay, sent
 * without waiting for each other's replies, since they need those replies only to be checked. The
 * ledger line, the event and the stored answer name the payment, whose id is the first flight's
 * reply, so they are the second flight. Each flight's replies are all read before anything is
 * decided. Any reply other than a first pay's (the key already claimed, the order not UNPAID, the
 * payment already there, too little money, any error) ends the attempt with nothing committed, and
 * the sequential pay decides the request: replays and refusals cost what they did before.
 */
@ApplicationScoped
class PipelinedBalancePay {

    private final PipelinedTransactions transactions;
    private final KeyAnswers keys;
    private final OrderRepository orders;
    private final BalancePaymentRepository payments;
    private final Ledger ledger;
    private final Outbox outbox;

    PipelinedBalancePay(PipelinedTransactions transactions, KeyAnswers keys, OrderRepository orders,
                        BalancePaymentRepository payments, Ledger ledger, Outbox outbox) {
        this.transactions = transactions;
        this.keys = keys;
        this.orders = orders;
        this.payments = payments;
        this.ledger = ledger;
        this.outbox = outbox;
    }

    /** The committed first pay's answer, or null when this was not a first pay that could be made (nothing committed). */
    Uni<Answer> pay(Order order, KeyedWrite write) {
        return transactions.commitIfExpected(tx -> firstFlight(tx, order, write)
                .flatMap(paymentId -> paymentId == null ? Uni.createFrom().nullItem() : secondFlight(tx, order, write, paymentId)));
    }

    /**
     * Claim, compare-and-set, payment and debit, sent together in this order (the order the
     * sequential pay takes its locks in): the payment's id when every one did what a first pay does.
     */
    private Uni<Long> firstFlight(SqlConnection tx, Order order, KeyedWrite write) {
        return Uni.combine().all().unis(
                        keys.claim(tx, write),
                        orders.compareAndSetStatus(tx, order.id(), OrderStatus.UNPAID, OrderStatus.PAID),
                        payments.insertPayment(tx, order, write.key()),
                        ledger.takeIfCovered(tx, order.userId(), order.currency(), order.amount()))
                .collectFailures()
                .with((claimed, moved, paymentId, debited) -> claimed && moved && debited ? paymentId : null);
    }

    /** The ledger line, the event and the stored answer, sent together: the answer when all three were written. */
    private Uni<Answer> secondFlight(SqlConnection tx, Order order, KeyedWrite write, long paymentId) {
        String reference = EntryType.referenceOf(paymentId);
        return Uni.combine().all().unis(
                        ledger.book(tx, order.userId(), -order.amount(), EntryType.PAYMENT, reference),
                        outbox.record(tx, EventType.PAYMENT_SUCCEEDED, Method.BALANCE, order.userId(), order.id(), reference, order.amount(),
                                order.currency(), write.key().value()),
                        keys.storeClaimed(tx, write, Answer.created(BalancePayments.paidView(paymentId, order))))
                .collectFailures()
                .with((booked, recorded, answer) -> answer);
    }
}
