package io.payonce.payment.refund;

import io.payonce.idempotency.IdempotencyKey;
import io.payonce.order.Order;
import io.payonce.payment.PaymentMethod;
import io.payonce.payment.operation.Operation;
import io.payonce.payment.operation.Phase;

import java.time.Duration;

/**
 * A refund to the card as a worker holds it ({@link Operation}): the request that began it (its
 * caller's scope and key), the charge it refunds, and the processor's refund recorded as its own.
 */
record CardRefund(long id, long orderId, String userId, String refundNo, long amount, String currency, RefundPhase phase,
                  String scope, IdempotencyKey key, String processorKey, String chargeId, int attempts, Duration sinceFirstSent,
                  String processorRefundId) implements Operation<CardRefund> {

    /** A refund's phases are the lifecycle's, in the same words. */
    @Override
    public Phase lifecyclePhase() {
        return Phase.valueOf(phase.name());
    }

    @Override
    public String phaseNamed(Phase lifecycle) {
        return lifecycle.name();
    }

    @Override
    public CardRefund at(Phase lifecycle) {
        return in(RefundPhase.valueOf(lifecycle.name()));
    }

    /** What the refund tells the processor it is for, in words a person at the processor's dashboard can trace. */
    @Override
    public String reference() {
        return "order-" + orderId + "-refund-" + refundNo;
    }

    /** The charge the refund gives money back from, which the processor's refund must name. */
    @Override
    public String actsOn() {
        return chargeId;
    }

    /** The processor's refund recorded as this one. */
    @Override
    public String processorId() {
        return processorRefundId;
    }

    /** The refund as its request is answered, with the order as it stands after it. */
    RefundView view(Order order) {
        return RefundView.of(new Refund(id, orderId, refundNo, amount, PaymentMethod.CARD, phase, null), order);
    }

    CardRefund in(RefundPhase next) {
        return new CardRefund(id, orderId, userId, refundNo, amount, currency, next, scope, key, processorKey, chargeId, attempts,
                sinceFirstSent, processorRefundId);
    }

    @Override
    public CardRefund nextAttempt() {
        return new CardRefund(id, orderId, userId, refundNo, amount, currency, phase, scope, key, processorKey, chargeId, attempts + 1,
                sinceFirstSent, processorRefundId);
    }
}
