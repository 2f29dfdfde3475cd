package io.payonce.payment.card;

import io.payonce.errors.ErrorCode;
import io.payonce.idempotency.Answer;
import io.payonce.payment.operation.OperationKind;
import io.payonce.payment.operation.OperationStore;
import io.payonce.processor.ChargeOutcome;
import io.payonce.processor.ChargeRequest;
import io.payonce.processor.Processor;
import io.payonce.processor.Unclear;
import io.smallrye.mutiny.Uni;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * The card charge as a kind of processor operation: its table, its calls (a charge and a lookup
 * under the payment's own processor key) and its settlement ({@link CardSettlement}). The lifecycle
 * drives it ({@code Lifecycle}); nothing here decides when to call.
 */
@ApplicationScoped
class CardCharge implements OperationKind<CardPayment, ChargeOutcome> {

    private final CardPaymentRepository cards;
    private final Processor processor;
    private final CardSettlement settlement;

    CardCharge(CardPaymentRepository cards, Processor processor, CardSettlement settlement) {
        this.cards = cards;
        this.processor = processor;
        this.settlement = settlement;
    }

    @Override
    public String name() {
        return "Card payment";
    }

    @Override
    public String madeAtProcessor() {
        return "charge";
    }

    @Override
    public OperationStore<CardPayment> store() {
        return cards;
    }

    @Override
    public Uni<ChargeOutcome> send(CardPayment payment) {
        return processor.charge(payment.processorKey(),
                new ChargeRequest(payment.amount(), payment.currency(), payment.cardToken(), payment.reference()));
    }

    @Override
    public Uni<ChargeOutcome> lookUp(CardPayment payment) {
        return processor.chargeUnder(payment.processorKey());
    }

    @Override
    public boolean isAbsent(ChargeOutcome outcome) {
        return outcome instanceof ChargeOutcome.Absent;
    }

    @Override
    public ChargeOutcome unknown(String reason) {
        return new Unclear(reason);
    }

    @Override
    public Uni<Answer> settle(CardPayment payment, ChargeOutcome outcome) {
        return settlement.settle(payment, outcome);
    }

    @Override
    public Uni<Answer> answerSoFar(CardPayment payment) {
        return settlement.answerSoFar(payment);
    }

    @Override
    public ErrorCode pending() {
        return ErrorCode.PAYMENT_IN_PROGRESS;
    }

    @Override
    public String overdueGauge() {
        return "payonce.card.payments.overdue";
    }

    @Override
    public String overdueDescription() {
        return "Card payments still not settled a minute after they began (the processor is down or gives no definite answer), "
                + "as the recovery job last counted";
    }
}
