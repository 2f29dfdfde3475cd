package io.payonce.payment.refund;

import io.payonce.errors.ErrorCode;
import io.payonce.payment.operation.OperationKind;
import io.payonce.processor.Processor;
import io.payonce.processor.RefundOutcome;
import io.payonce.processor.RefundRequest;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Singleton;

/**
 * The refund to the card as a kind of processor operation: its words, its calls (a refund of the
 * payment's charge and a lookup, under the refund's own processor key) and its settlement
 * ({@link CardRefundSettlement}). The lifecycle drives it ({@code Lifecycle}); nothing here decides
 * when to call.
 */
@Singleton
class RefundToCard extends OperationKind<CardRefund, RefundOutcome> {

    private static final Words WORDS = new Words("Refund to the card", ErrorCode.REFUND_PENDING, "payonce.card.refunds.overdue",
            "Refunds to the card still not settled a minute after they began (the processor is down or gives no definite "
                    + "answer), as the recovery job last counted");

    private final Processor processor;

    RefundToCard(Processor processor, CardRefundSettlement settlement) {
        super(WORDS, settlement);
        this.processor = processor;
    }

    @Override
    protected Uni<RefundOutcome> send(CardRefund refund) {
        return processor.refund(refund.processorKey(),
                new RefundRequest(refund.chargeId(), refund.amount(), refund.currency(), refund.reference()));
    }

    @Override
    protected Uni<RefundOutcome> lookUp(CardRefund refund) {
        return processor.refundUnder(refund.processorKey());
    }
}
