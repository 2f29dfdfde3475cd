package io.payonce.payment.card;

import io.payonce.payment.PaymentPhase;
import io.payonce.payment.operation.ProcessorIdTaken;
import io.payonce.processor.ChargeOutcome;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * The card room's door for a charge's outcome that payonce learns from outside its own calls: the
 * processor's webhook events. The payment is found by the key its charge was made under, and a
 * definite outcome settles it through {@link CardSettlement}, as if a lookup had returned it: the
 * same checks of amount, currency and order, the same compare-and-set on its phase, the same
 * order, event and key's answer. A payment that has an outcome already keeps it, whatever the
 * notice says; a key no payment was made under creates nothing. A charge of another amount,
 * currency or order under the payment's key settles nothing and moves nothing either: the notice
 * holds no lease on the payment, so it leaves marking it UNKNOWN to the worker or the recovery job
 * whose own lookup will meet the same charge. So does a charge that another payment has recorded
 * already: the event contradicts, and is kept for ops, never a failure the processor would deliver
 * again for days.
 */
@ApplicationScoped
public class ChargeNotices {

    private final CardPaymentRepository cards;
    private final CardSettlement settlement;

    ChargeNotices(CardPaymentRepository cards, CardSettlement settlement) {
        this.cards = cards;
        this.settlement = settlement;
    }

    /**
     * Applies {@code outcome} (definite: succeeded or declined) of the charge made under
     * {@code processorKey}, in {@code tx}, which the caller commits with whatever else it records;
     * {@code eventId} is written on the phase it moves the payment into. The payment stays locked
     * until {@code tx} ends, so nothing settles it between what this finds and what it records.
     */
    public Uni<ChargeNotice> apply(SqlConnection tx, String processorKey, ChargeOutcome outcome, String eventId) {
        if (!(outcome instanceof ChargeOutcome.Succeeded) && !(outcome instanceof ChargeOutcome.Declined)) {
            throw new IllegalArgumentException("Only a definite outcome settles a payment: " + outcome);
        }
        return cards.lockByProcessorKey(tx, processorKey).flatMap(payment -> {
            if (payment == null) {
                return Uni.createFrom().item(ChargeNotice.unknownCharge());
            }
            if (payment.phase().definite()) {
                ChargeNotice.Effect effect = payment.isSettledAs(outcome.report()) ? ChargeNotice.Effect.ALREADY_SETTLED
                        : ChargeNotice.Effect.CONTRADICTING;
                return Uni.createFrom().item(new ChargeNotice(payment.id(), payment.phase(), effect));
            }
            if (!payment.isDescribedBy(outcome.report())) {
                return Uni.createFrom().item(new ChargeNotice(payment.id(), payment.phase(), ChargeNotice.Effect.CONTRADICTING));
            }
            return settlement.record(tx, payment, outcome, eventId)
                    .map(answer -> new ChargeNotice(payment.id(), phaseOf(outcome), ChargeNotice.Effect.APPLIED))
                    .onFailure(ProcessorIdTaken.class)
                    .recoverWithItem(new ChargeNotice(payment.id(), payment.phase(), ChargeNotice.Effect.CONTRADICTING));
        });
    }

    private static PaymentPhase phaseOf(ChargeOutcome outcome) {
        return outcome instanceof ChargeOutcome.Succeeded ? PaymentPhase.SUCCEEDED : PaymentPhase.DECLINED;
    }
}
