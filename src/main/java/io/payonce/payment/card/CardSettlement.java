package io.payonce.payment.card;

import io.payonce.account.EntryType;
import io.payonce.config.PayonceConfig;
import io.payonce.db.Transactions;
import io.payonce.errors.ApiException;
import io.payonce.events.EventType;
import io.payonce.events.Method;
import io.payonce.events.Outbox;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.KeyAnswers;
import io.payonce.order.OrderRepository;
import io.payonce.order.OrderStatus;
import io.payonce.payment.PaymentPhase;
import io.payonce.payment.operation.ProcessorIdTaken;
import io.payonce.processor.ChargeOutcome;
import io.payonce.processor.ProcessorText;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.function.Supplier;

/**
 * Records what the processor said about a card payment, each outcome in one transaction with the
 * order, the event and the key's answer, exactly alike whoever learnt it: the request itself, a
 * retry of it, the recovery job or the processor's webhook event ({@link ChargeNotices}). A definite outcome settles the payment (SUCCEEDED: the order is
 * PAID and the client's 201 stored; DECLINED: the order is UNPAID again and the 402 stored); any
 * other leaves it UNKNOWN, answered 202 for now, for the recovery job. Each starts with a
 * compare-and-set on the payment's phase, so an outcome learnt twice is recorded once: the second
 * finds the payment settled and answers with what the first stored.
 */
@ApplicationScoped
class CardSettlement {

    private static final Logger LOG = Logger.getLogger(CardSettlement.class);

    /** The first wait before the recovery job asks again; each attempt doubles it, up to the configured most. */
    private static final Duration FIRST_BACKOFF = Duration.ofMillis(500);

    private final Pool pool;
    private final Transactions transactions;
    private final CardPaymentRepository cards;
    private final OrderRepository orders;
    private final Outbox outbox;
    private final KeyAnswers keys;
    private final Duration maxBackoff;

    CardSettlement(Pool pool, Transactions transactions, CardPaymentRepository cards, OrderRepository orders, Outbox outbox, KeyAnswers keys,
                   PayonceConfig config) {
        this.pool = pool;
        this.transactions = transactions;
        this.cards = cards;
        this.orders = orders;
        this.outbox = outbox;
        this.keys = keys;
        this.maxBackoff = config.processor().recoveryBackoffMax();
    }

    /**
     * A charge that another payment recorded already is not this payment's, as one of another amount
     * is not: the payment is left UNKNOWN, in the same transaction, since the refused compare-and-set
     * wrote nothing and nothing before it writes.
     */
    Uni<Answer> settle(CardPayment payment, ChargeOutcome outcome) {
        return transactions.inTransaction(tx -> record(tx, payment, outcome, null)
                .onFailure(ProcessorIdTaken.class).recoverWithUni(taken -> {
                    LOG.errorf("Processor charge %s under payment %d's key is recorded on another payment already: left UNKNOWN for an operator",
                            ((ProcessorIdTaken) taken).processorId(), payment.id());
                    return unknown(tx, payment, "the processor reported a charge already recorded on another payment", false);
                })
                .flatMap(answer -> answer != null ? Uni.createFrom().item(answer) : answerSoFar(tx, payment)));
    }

    /**
     * Records {@code outcome} in {@code tx}: the phase's compare-and-set first, then the rest of the
     * outcome. Returns the key's new answer, or null when the compare-and-set moved nothing (another
     * worker settled or took over the payment first). {@code eventId} names the processor's webhook
     * event that told a definite outcome, null when payonce's own call learnt it.
     *
     * @throws ProcessorIdTaken when another payment has recorded the charge already: nothing was written
     */
    Uni<Answer> record(SqlConnection tx, CardPayment payment, ChargeOutcome outcome, String eventId) {
        if (!payment.isDescribedBy(outcome.report())) {
            LOG.errorf("Processor said %s under payment %d's key, not of its %d %s for %s: left UNKNOWN for an operator",
                    outcome, payment.id(), payment.amount(), payment.currency(), payment.reference());
            return unknown(tx, payment, "the processor reported another charge under this key", false);
        }
        if (outcome instanceof ChargeOutcome.Succeeded charged) {
            if (charged.chargeId() == null) {
                LOG.warnf("Payment %d was charged under an id payonce cannot keep: refunds of order %d go through the processor's dashboard",
                        payment.id(), payment.orderId());
            }
            return ifMoved(cards.succeed(tx, payment.id(), charged.chargeId()),
                    () -> charged(tx, payment, "charge " + ProcessorText.shown(charged.chargeId()), eventId));
        }
        if (outcome instanceof ChargeOutcome.Declined declined) {
            return ifMoved(cards.decline(tx, payment.id(), declined.chargeId(), declined.declineCode()),
                    () -> notCharged(tx, payment, declined.declineCode(), declined.declineCode(), eventId));
        }
        if (outcome instanceof ChargeOutcome.Unknown unknown) {
            return unknown(tx, payment, unknown.reason(), !unknown.delivered() && payment.sinceFirstSent() == null);
        }
        return unknown(tx, payment, "no charge found yet", false);
    }

    /** What the payment's key answers now, for a worker that found the payment taken over or settled by another. */
    Uni<Answer> answerSoFar(CardPayment payment) {
        return answerSoFar(pool, payment);
    }

    /**
     * The rest of a payment that charged the card, once its phase has moved to SUCCEEDED in {@code tx}:
     * the order PAID, the phase in its history with {@code detail}, its event, and the client's 201
     * stored under its key, which this answers.
     */
    Uni<Answer> charged(SqlConnection tx, CardPayment payment, String detail) {
        return charged(tx, payment, detail, null);
    }

    /** {@code eventId}: the processor's webhook event that told the outcome, or null. */
    private Uni<Answer> charged(SqlConnection tx, CardPayment payment, String detail, String eventId) {
        CardPayment paid = payment.in(PaymentPhase.SUCCEEDED);
        return orderMoved(tx, payment, OrderStatus.PAID)
                .flatMap(v -> cards.recordPhase(tx, payment.id(), PaymentPhase.SUCCEEDED, detail, eventId))
                .flatMap(v -> outbox.record(tx, EventType.PAYMENT_SUCCEEDED, Method.CARD, payment.userId(), payment.orderId(),
                        EntryType.referenceOf(payment.id()), payment.amount(), payment.currency(), payment.key().value()))
                .flatMap(v -> keys.settle(tx, payment.userId(), payment.key(), Answer.created(paid.view())));
    }

    /**
     * The rest of a payment that charged nothing, once its phase has moved to DECLINED in {@code tx}:
     * the order UNPAID again, the phase in its history with {@code detail}, and the client's 402
     * CARD_DECLINED with {@code declineCode} stored under its key, which this answers.
     */
    Uni<Answer> notCharged(SqlConnection tx, CardPayment payment, String declineCode, String detail) {
        return notCharged(tx, payment, declineCode, detail, null);
    }

    /** {@code eventId}: the processor's webhook event that told the outcome, or null. */
    private Uni<Answer> notCharged(SqlConnection tx, CardPayment payment, String declineCode, String detail, String eventId) {
        ApiException refusal = new CardDecline(payment.id(), declineCode).refusal();
        return orderMoved(tx, payment, OrderStatus.UNPAID)
                .flatMap(v -> cards.recordPhase(tx, payment.id(), PaymentPhase.DECLINED, detail, eventId))
                .flatMap(v -> keys.settle(tx, payment.userId(), payment.key(), Answer.problem(refusal, payment.payPath())));
    }

    /**
     * {@code neverSent}: the send that failed never reached the processor, and no send was recorded
     * before it, so the resend window has not started.
     */
    private Uni<Answer> unknown(SqlConnection tx, CardPayment payment, String reason, boolean neverSent) {
        CardPayment unknown = payment.in(PaymentPhase.UNKNOWN);
        return ifMoved(cards.markUnknown(tx, payment, FIRST_BACKOFF, maxBackoff, neverSent),
                () -> (payment.phase() == PaymentPhase.UNKNOWN ? Uni.createFrom().voidItem()
                        : cards.recordPhase(tx, payment.id(), PaymentPhase.UNKNOWN, reason))
                        .flatMap(v -> keys.answerForNow(tx, payment.userId(), payment.key(),
                                Answer.accepted(unknown.view(), unknown.location()))));
    }

    /** The rest of an outcome once its compare-and-set moved the phase; null when it moved nothing. */
    private static Uni<Answer> ifMoved(Uni<Boolean> compareAndSet, Supplier<Uni<Answer>> rest) {
        return compareAndSet.flatMap(moved -> moved ? rest.get() : Uni.createFrom().nullItem());
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

    /**
     * The key's stored answer; should retention have deleted it, a 202 that sends the client to the
     * payment itself, which always tells where it stands.
     */
    private Uni<Answer> answerSoFar(SqlClient client, CardPayment payment) {
        return keys.storedAnswer(client, payment.userId(), payment.key())
                .map(stored -> stored != null ? stored : Answer.accepted(payment.view(), payment.location()));
    }
}
