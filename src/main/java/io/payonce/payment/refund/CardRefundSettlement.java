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
import io.payonce.payment.operation.ProcessorIdTaken;
import io.payonce.processor.ProcessorText;
import io.payonce.processor.RefundOutcome;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Records what the processor said about a refund to the card, each outcome in one transaction with
 * the order, the event and the key's answer, exactly alike whoever learnt it: the request itself, a
 * retry of it, the recovery job or the processor's webhook event ({@link RefundNotices}). SUCCEEDED writes the refund's event, and makes the order REFUNDED
 * once its refunds add up to its amount and none of them waits any more; FAILED gives the refund's
 * reservation back to the order and stores the 402; any other outcome leaves the refund UNKNOWN,
 * answered 202 for now, for the recovery job. A definite outcome takes the order's row lock first,
 * as the refund's first transaction did, then moves the refund's phase by compare-and-set: an outcome
 * learnt twice is recorded once, and two refunds of one order settling at once see each other.
 */
@ApplicationScoped
class CardRefundSettlement {

    private static final Logger LOG = Logger.getLogger(CardRefundSettlement.class);

    /** The first wait before the recovery job asks again; each attempt doubles it, up to the configured most. */
    private static final Duration FIRST_BACKOFF = Duration.ofMillis(500);

    private final Pool pool;
    private final Transactions transactions;
    private final CardRefundRepository cardRefunds;
    private final OrderRepository orders;
    private final Outbox outbox;
    private final KeyAnswers keys;
    private final Duration maxBackoff;

    CardRefundSettlement(Pool pool, Transactions transactions, CardRefundRepository cardRefunds, OrderRepository orders, Outbox outbox,
                         KeyAnswers keys, PayonceConfig config) {
        this.pool = pool;
        this.transactions = transactions;
        this.cardRefunds = cardRefunds;
        this.orders = orders;
        this.outbox = outbox;
        this.keys = keys;
        this.maxBackoff = config.processor().recoveryBackoffMax();
    }

    Uni<Answer> settle(CardRefund refund, RefundOutcome outcome) {
        if (!refund.isDescribedBy(outcome.report())) {
            LOG.errorf("Processor said %s under refund %d's key, not of its %d %s of charge %s for %s: left UNKNOWN for an operator",
                    outcome, refund.id(), refund.amount(), refund.currency(), refund.chargeId(), refund.reference());
            return unknown(refund, "the processor reported another refund under this key", false);
        }
        if (outcome instanceof RefundOutcome.Succeeded || outcome instanceof RefundOutcome.Failed) {
            return definite(refund, outcome);
        }
        if (outcome instanceof RefundOutcome.Unknown unknown) {
            return unknown(refund, unknown.reason(), !unknown.delivered() && refund.sinceFirstSent() == null);
        }
        return unknown(refund, "no refund found yet", false);
    }

    /**
     * Records a definite {@code outcome} in {@code tx}, which holds the order's row lock
     * ({@code order} as locked): the phase's compare-and-set first, then the rest of the outcome. The
     * outcome must be this refund's ({@link CardRefund#isDescribedBy}). Returns the key's new answer,
     * or null when the compare-and-set moved nothing (the refund was settled already).
     * {@code eventId} names the processor's webhook event that told the outcome, null when payonce's
     * own call learnt it.
     *
     * @throws ProcessorIdTaken when another refund has recorded the processor refund already: nothing was written
     */
    Uni<Answer> record(SqlConnection tx, CardRefund refund, Order order, RefundOutcome outcome, String eventId) {
        if (outcome instanceof RefundOutcome.Succeeded refunded) {
            return ifMoved(cardRefunds.succeed(tx, refund.id(), refunded.refundId()),
                    () -> succeeded(tx, refund, order, "refund " + ProcessorText.shown(refunded.refundId()), eventId));
        }
        if (outcome instanceof RefundOutcome.Failed failed) {
            return ifMoved(cardRefunds.fail(tx, refund.id(), failed.refundId(), failed.failureCode()),
                    () -> failed(tx, refund, failed.failureCode(), failed.failureCode(), eventId));
        }
        throw new IllegalArgumentException("Only a definite outcome settles a refund: " + outcome);
    }

    /** What the refund's key answers now, for a worker that found the refund taken over or settled by another. */
    Uni<Answer> answerSoFar(CardRefund refund) {
        return answerSoFar(pool, refund);
    }

    /**
     * The rest of {@code refund}'s success once its phase moved to SUCCEEDED in {@code tx}, under the
     * order's row lock ({@code order} as locked): its history line ({@code detail}, {@code eventId}),
     * the order, its event and its key's answer. An operator's settlement records it so too.
     */
    Uni<Answer> succeeded(SqlConnection tx, CardRefund refund, Order order, String detail, String eventId) {
        return cardRefunds.recordPhase(tx, refund.id(), RefundPhase.SUCCEEDED, detail, eventId)
                .flatMap(v -> refundedInFull(tx, order))
                .flatMap(v -> outbox.record(tx, EventType.REFUND_CREATED, Method.CARD, refund.userId(), refund.orderId(),
                        EntryType.referenceOf(refund.id()), refund.amount(), refund.currency(), refund.key().value()))
                .flatMap(v -> orders.findById(tx, refund.orderId()))
                .flatMap(after -> keys.settle(tx, refund.scope(), refund.key(), Answer.created(refund.in(RefundPhase.SUCCEEDED).view(after))));
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

    /**
     * The rest of {@code refund}'s failure once its phase moved to FAILED in {@code tx}, under the
     * order's row lock: its reservation given back to the order, its history line ({@code detail},
     * {@code eventId}), and its key's 402 naming {@code failureCode}. An operator's settlement records it so too.
     */
    Uni<Answer> failed(SqlConnection tx, CardRefund refund, String failureCode, String detail, String eventId) {
        ApiException refusal = new ApiException(ErrorCode.REFUND_FAILED, Map.of("refundId", refund.id(), "failureCode", failureCode),
                failureCode);
        return orders.releaseRefund(tx, refund.orderId(), refund.amount())
                .invoke(released -> {
                    if (!released) {
                        throw new IllegalStateException("Order " + refund.orderId() + " held no reservation for refund " + refund.id());
                    }
                })
                .flatMap(v -> cardRefunds.recordPhase(tx, refund.id(), RefundPhase.FAILED, detail, eventId))
                .flatMap(v -> keys.settle(tx, refund.scope(), refund.key(), Answer.problem(refusal, refund.refundPath())));
    }

    /** {@code neverSent}: the send that failed certainly never reached the processor, and no send before it is known to have. */
    private Uni<Answer> unknown(CardRefund refund, String reason, boolean neverSent) {
        return transactions.inTransaction(tx -> unknown(tx, refund, reason, neverSent));
    }

    private Uni<Answer> unknown(SqlClient tx, CardRefund refund, String reason, boolean neverSent) {
        return cardRefunds.markUnknown(tx, refund, FIRST_BACKOFF, maxBackoff, neverSent).flatMap(moved -> {
            if (!moved) {
                return answerSoFar(tx, refund);
            }
            return (refund.phase() == RefundPhase.UNKNOWN ? Uni.createFrom().voidItem()
                    : cardRefunds.recordPhase(tx, refund.id(), RefundPhase.UNKNOWN, reason))
                    .flatMap(v -> orders.findById(tx, refund.orderId()))
                    .flatMap(order -> keys.answerForNow(tx, refund.scope(), refund.key(),
                            Answer.accepted(refund.in(RefundPhase.UNKNOWN).view(order), refund.location())));
        });
    }

    /**
     * One definite outcome, one transaction: the order's row lock, then the outcome. A
     * compare-and-set that moved nothing found the refund settled, or taken over, by another worker:
     * the key's answer so far is the answer. A processor refund that another refund recorded already
     * is not this refund's, as one of another amount is not: the refund is left UNKNOWN, in the same
     * transaction, since the refused compare-and-set wrote nothing and nothing before it writes.
     */
    private Uni<Answer> definite(CardRefund refund, RefundOutcome outcome) {
        return transactions.inTransaction(tx -> orders.lockById(tx, refund.orderId())
                .flatMap(order -> record(tx, refund, order, outcome, null))
                .onFailure(ProcessorIdTaken.class).recoverWithUni(taken -> {
                    LOG.errorf("Processor refund %s under refund %d's key is recorded on another refund already: left UNKNOWN for an operator",
                            ((ProcessorIdTaken) taken).processorId(), refund.id());
                    return unknown(tx, refund, "the processor reported a refund already recorded on another refund", false);
                })
                .flatMap(answer -> answer != null ? Uni.createFrom().item(answer) : answerSoFar(tx, refund)));
    }

    /** The rest of an outcome once its compare-and-set moved the phase; null when it moved nothing. */
    private static Uni<Answer> ifMoved(Uni<Boolean> compareAndSet, Supplier<Uni<Answer>> rest) {
        return compareAndSet.flatMap(moved -> moved ? rest.get() : Uni.createFrom().nullItem());
    }

    /**
     * The key's stored answer; should retention have deleted it, a 202 that sends ops to the refund
     * itself, which always tells where it stands.
     */
    private Uni<Answer> answerSoFar(SqlClient client, CardRefund refund) {
        return keys.storedAnswer(client, refund.scope(), refund.key()).flatMap(stored -> stored != null
                ? Uni.createFrom().item(stored)
                : orders.findById(client, refund.orderId()).map(order -> Answer.accepted(refund.view(order), refund.location())));
    }
}
