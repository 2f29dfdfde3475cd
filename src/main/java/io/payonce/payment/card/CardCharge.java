package io.payonce.payment.card;

import io.payonce.errors.ErrorCode;
import io.payonce.payment.operation.OperationKind;
import io.payonce.processor.ChargeOutcome;
import io.payonce.processor.ChargeRequest;
import io.payonce.processor.Processor;
import io.smallrye.mutiny.Uni;
import jakarta.inject.Singleton;

/**
 * The card charge as a kind of processor operation: its words, its calls (a charge and a lookup
 * under the payment's own processor key) and its settlement ({@link CardSettlement}). The lifecycle
 * drives it ({@code Lifecycle}); nothing here decides when to call.
 */
@Singleton
class CardCharge extends OperationKind<CardPayment, ChargeOutcome> {

    private static final Words WORDS = new Words("Card payment", ErrorCode.PAYMENT_IN_PROGRESS, "payonce.card.payments.overdue",
            "Card payments still not settled a minute after they began (the processor is down or gives no definite answer), "
                    + "as the recovery job last counted");

    private final Processor processor;

    CardCharge(Processor processor, CardSettlement settlement) {
        super(WORDS, settlement);
        this.processor = processor;
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
}
