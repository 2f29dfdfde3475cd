package io.payonce.payment.refund;

import io.payonce.errors.ErrorCode;
import io.payonce.idempotency.Answer;
import io.payonce.payment.operation.OperationKind;
import io.payonce.payment.operation.OperationStore;
import io.payonce.processor.Processor;
import io.payonce.processor.RefundOutcome;
import io.payonce.processor.RefundRequest;
import io.payonce.processor.Unclear;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * The refund to the card as a kind of processor operation: its table, its calls (a refund of the
 * payment's charge and a lookup, under the refund's own processor key) and its settlement
 * ({@link CardRefundSettlement}). The lifecycle drives it ({@code Lifecycle}); nothing here decides
 * when to call.
 */
@ApplicationScoped
class RefundToCard implements OperationKind<CardRefund, RefundOutcome> {

    private final CardRefundRepository cardRefunds;
    private final Processor processor;
    private final CardRefundSettlement settlement;

    RefundToCard(CardRefundRepository cardRefunds, Processor processor, CardRefundSettlement settlement) {
        this.cardRefunds = cardRefunds;
        this.processor = processor;
        this.settlement = settlement;
    }

    @Override
    public String name() {
        return "Refund to the card";
    }

    @Override
    public String madeAtProcessor() {
        return "refund";
    }

    @Override
    public OperationStore<CardRefund> store() {
        return cardRefunds;
    }

    @Override
    public Uni<RefundOutcome> send(CardRefund refund) {
        return processor.refund(refund.processorKey(),
                new RefundRequest(refund.chargeId(), refund.amount(), refund.currency(), refund.reference()));
    }

    @Override
    public Uni<RefundOutcome> lookUp(CardRefund refund) {
        return processor.refundUnder(refund.processorKey());
    }

    @Override
    public boolean isAbsent(RefundOutcome outcome) {
        return outcome instanceof RefundOutcome.Absent;
    }

    @Override
    public RefundOutcome unknown(String reason) {
        return new Unclear(reason);
    }

    @Override
    public Uni<Answer> settle(CardRefund refund, RefundOutcome outcome) {
        return settlement.settle(refund, outcome);
    }

    @Override
    public Uni<Answer> answerSoFar(CardRefund refund) {
        return settlement.answerSoFar(refund);
    }

    @Override
    public ErrorCode pending() {
        return ErrorCode.REFUND_PENDING;
    }

    @Override
    public String overdueGauge() {
        return "payonce.card.refunds.overdue";
    }

    @Override
    public String overdueDescription() {
        return "Refunds to the card still not settled a minute after they began (the processor is down or gives no definite "
                + "answer), as the recovery job last counted";
    }
}
