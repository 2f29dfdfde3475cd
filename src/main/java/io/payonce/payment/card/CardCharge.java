package io.payonce.payment.card;

import io.payonce.account.EntryType;
import io.payonce.config.PayonceConfig;
import io.payonce.db.Transactions;
import io.payonce.errors.ErrorCode;
import io.payonce.events.EventType;
import io.payonce.events.Method;
import io.payonce.events.Outbox;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.KeyAnswers;
import io.payonce.order.OrderRepository;
import io.payonce.order.OrderStatus;
import io.payonce.payment.PaymentPhase;
import io.payonce.payment.PaymentView;
import io.payonce.payment.operation.OperationKind;
import io.payonce.processor.ChargeOutcome;
import io.payonce.processor.ChargeRequest;
import io.payonce.processor.Processor;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.inject.Singleton;

/**
 * The card charge as a kind of processor operation ({@link OperationKind}): a charge and a lookup
 * under the payment's own processor key. SUCCEEDED makes the order PAID and stores the client's 201;
 * DECLINED makes the order UNPAID again and stores the 402. The lifecycle drives it; nothing here
 * decides when to call.
 */
@Singleton
public class CardCharge extends OperationKind<CardPayment, ChargeOutcome, Void> {

    private static final Words WORDS = new Words("Card payment", "charge", "payment", ErrorCode.PAYMENT_IN_PROGRESS,
            "payonce.card.payments.overdue", "Card payments still not settled a minute after they began (the processor is down "
                    + "or gives no definite answer), as the recovery job last counted");

    private final Processor processor;
    private final OrderRepository orders;
    private final Outbox outbox;

    CardCharge(Processor processor, Pool pool, Transactions transactions, CardPaymentRepository cards, OrderRepository orders, Outbox outbox,
               KeyAnswers keys, PayonceConfig config) {
        super(WORDS, pool, transactions, cards, keys, config.processor().recoveryBackoffMax());
        this.processor = processor;
        this.orders = orders;
        this.outbox = outbox;
    }

    @Override
    protected Uni<ChargeOutcome> send(CardPayment payment) {
        return processor.charge(payment.processorKey(),
                new ChargeRequest(payment.amount(), payment.currency(), payment.cardToken(), payment.reference()));
    }

    @Override
    protected Uni<ChargeOutcome> lookUp(CardPayment payment) {
        return processor.chargeUnder(payment.processorKey());
    }

    /** A payment's outcome takes no lock before its own compare-and-set: its order waits in PAYING for it alone. */
    @Override
    protected Uni<Void> lockFor(SqlConnection tx, CardPayment payment) {
        return Uni.createFrom().voidItem();
    }

    @Override
    protected Uni<Answer> accepted(SqlClient client, CardPayment payment) {
        return Uni.createFrom().item(Answer.accepted(payment.view(), PaymentView.location(payment.id())));
    }

    /** A payment that charged the card: the order PAID, its event, and the client's 201. */
    @Override
    protected Uni<Answer> succeeded(SqlConnection tx, CardPayment payment, Void nothingLocked) {
        return orderMoved(tx, payment, OrderStatus.PAID)
                .flatMap(v -> outbox.record(tx, EventType.PAYMENT_SUCCEEDED, Method.CARD, payment.userId(), payment.orderId(),
                        EntryType.referenceOf(payment.id()), payment.amount(), payment.currency(), payment.key().value()))
                .replaceWith(Answer.created(payment.in(PaymentPhase.SUCCEEDED).view()));
    }

    /** A payment that charged nothing: the order UNPAID again, and the client's 402 CARD_DECLINED with {@code declineCode}. */
    @Override
    protected Uni<Answer> failed(SqlConnection tx, CardPayment payment, Void nothingLocked, String declineCode) {
        // The problem's instance is the pay request's path, whoever learnt the decline.
        return orderMoved(tx, payment, OrderStatus.UNPAID)
                .replaceWith(Answer.problem(CardPayment.declined(payment.id(), declineCode), "/orders/" + payment.orderId() + "/pay"));
    }

    /** The order waited in PAYING for exactly this payment; anything else is a broken invariant, never an answer. */
    private Uni<Void> orderMoved(SqlConnection tx, CardPayment payment, OrderStatus next) {
        return orders.compareAndSetStatus(tx, payment.orderId(), OrderStatus.PAYING, next).map(moved -> {
            if (!moved) {
                throw new IllegalStateException("Order " + payment.orderId() + " was not PAYING when payment " + payment.id() + " settled");
            }
            return null;
        });
    }
}
