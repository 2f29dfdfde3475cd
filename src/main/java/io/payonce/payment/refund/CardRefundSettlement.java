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
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.order.Order;
import io.payonce.order.OrderRepository;
import io.payonce.order.OrderStatus;
import io.payonce.processor.RefundOutcome;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.Map;
import java.util.function.Function;

/**
 * Records what the processor said about a refund to the card, each outcome in one transaction with
 * the order, the event and the key's answer, exactly alike whoever learnt it: the request itself, a
 * retry of it or the recovery job. SUCCEEDED writes the refund's event, and makes the order REFUNDED
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
    private final IdempotencyGuard guard;
    private final Duration maxBackoff;

    CardRefundSettlement(Pool pool, Transactions transactions, CardRefundRepository cardRefunds, OrderRepository orders, Outbox outbox,
                         IdempotencyGuard guard, PayonceConfig config) {
        this.pool = pool;
        this.transactions = transactions;
        this.cardRefunds = cardRefunds;
        this.orders = orders;
        this.outbox = outbox;
        this.guard = guard;
        this.maxBackoff = config.processor().recoveryBackoffMax();
    }

    Uni<Answer> settle(CardRefund refund, RefundOutcome outcome) {
        if (outcome instanceof RefundOutcome.Succeeded refunded) {
            if (isThisRefunds(refunded, refund)) {
                return succeeded(refund, refunded);
            }
            LOG.errorf("Processor refund %s under refund %d's key is %d %s of charge %s, not %d %s of charge %s: left UNKNOWN for an operator",
                    refunded.refundId(), refund.id(), refunded.amount(), refunded.currency(), refunded.chargeId(), refund.amount(),
                    refund.currency(), refund.chargeId());
            return unknown(refund, "the processor reported another refund under this key", false);
        }
        if (outcome instanceof RefundOutcome.Failed failed) {
            return failed(refund, failed);
        }
        if (outcome instanceof RefundOutcome.Unknown unknown) {
            return unknown(refund, unknown.reason(), !unknown.delivered() && refund.sinceFirstSent() == null);
        }
        return unknown(refund, "no refund found yet", false);
    }

    /** The refund is this one: its amount, its currency (in either case), and the charge it refunds, which the processor must name. */
    private static boolean isThisRefunds(RefundOutcome.Succeeded refunded, CardRefund refund) {
        return refunded.amount() == refund.amount() && refund.currency().equalsIgnoreCase(refunded.currency())
                && refund.chargeId().equals(refunded.chargeId());
    }

    /** What the refund's key answers now, for a worker that found the refund taken over or settled by another. */
    Uni<Answer> answerSoFar(CardRefund refund) {
        return answerSoFar(pool, refund);
    }

    private Uni<Answer> succeeded(CardRefund refund, RefundOutcome.Succeeded refunded) {
        return definite(refund, tx -> cardRefunds.succeed(tx, refund.id(), refunded.refundId()), (tx, order) -> cardRefunds
                .recordPhase(tx, refund.id(), RefundPhase.SUCCEEDED, "refund " + refunded.refundId())
                .flatMap(v -> refundedInFull(tx, order))
                .flatMap(v -> outbox.record(tx, EventType.REFUND_CREATED, Method.CARD, refund.userId(), refund.orderId(),
                        EntryType.referenceOf(refund.id()), refund.amount(), refund.currency(), refund.key().value()))
                .flatMap(v -> orders.findById(tx, refund.orderId()))
                .flatMap(after -> guard.settle(tx, refund.scope(), refund.key(), Answer.created(refund.in(RefundPhase.SUCCEEDED).view(after)))));
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

    private Uni<Answer> failed(CardRefund refund, RefundOutcome.Failed failed) {
        ApiException refusal = new ApiException(ErrorCode.REFUND_FAILED, Map.of("refundId", refund.id(), "failureCode", failed.failureCode()),
                failed.failureCode());
        return definite(refund, tx -> cardRefunds.fail(tx, refund.id(), failed.refundId(), failed.failureCode()), (tx, order) -> orders
                .releaseRefund(tx, refund.orderId(), refund.amount())
                .invoke(released -> {
                    if (!released) {
                        throw new IllegalStateException("Order " + refund.orderId() + " held no reservation for refund " + refund.id());
                    }
                })
                .flatMap(v -> cardRefunds.recordPhase(tx, refund.id(), RefundPhase.FAILED, failed.failureCode()))
                .flatMap(v -> guard.settle(tx, refund.scope(), refund.key(), Answer.problem(refusal, refund.refundPath()))));
    }

    /** {@code neverSent}: the send that failed certainly never reached the processor, and no send before it is known to have. */
    private Uni<Answer> unknown(CardRefund refund, String reason, boolean neverSent) {
        return transactions.inTransaction(tx -> cardRefunds.markUnknown(tx, refund, FIRST_BACKOFF, maxBackoff, neverSent).flatMap(moved -> {
            if (!moved) {
                return answerSoFar(tx, refund);
            }
            return (refund.phase() == RefundPhase.UNKNOWN ? Uni.createFrom().voidItem()
                    : cardRefunds.recordPhase(tx, refund.id(), RefundPhase.UNKNOWN, reason))
                    .flatMap(v -> orders.findById(tx, refund.orderId()))
                    .flatMap(order -> guard.answerForNow(tx, refund.scope(), refund.key(),
                            Answer.accepted(refund.in(RefundPhase.UNKNOWN).view(order), refund.location())));
        }));
    }

    /**
     * One definite outcome, one transaction: the order's row lock, the phase's compare-and-set, then
     * the rest of the outcome. A compare-and-set that moved nothing found the refund settled, or taken
     * over, by another worker: the key's answer so far is the answer.
     */
    private Uni<Answer> definite(CardRefund refund, Function<SqlConnection, Uni<Boolean>> movePhase, Outcome rest) {
        return transactions.inTransaction(tx -> orders.lockById(tx, refund.orderId()).flatMap(order -> movePhase.apply(tx)
                .flatMap(moved -> moved ? rest.apply(tx, order) : answerSoFar(tx, refund))));
    }

    /**
     * The key's stored answer; should retention have deleted it, a 202 that sends ops to the refund
     * itself, which always tells where it stands.
     */
    private Uni<Answer> answerSoFar(SqlClient client, CardRefund refund) {
        return guard.storedAnswer(client, refund.scope(), refund.key()).flatMap(stored -> stored != null
                ? Uni.createFrom().item(stored)
                : orders.findById(client, refund.orderId()).map(order -> Answer.accepted(refund.view(order), refund.location())));
    }

    /** The rest of a definite outcome, once its phase moved, with the order as locked. */
    @FunctionalInterface
    private interface Outcome {
        Uni<Answer> apply(SqlConnection tx, Order order);
    }
}
