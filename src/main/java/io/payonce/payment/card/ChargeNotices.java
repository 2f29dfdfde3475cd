package io.payonce.payment.card;

import io.payonce.payment.operation.Notice;
import io.payonce.processor.ChargeOutcome;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * The card room's door for a charge's outcome that payonce learns from outside its own calls: the
 * processor's webhook events. The payment is found by the key its charge was made under, judged as
 * every operation is ({@link Notice#of}), and settled through {@link CardCharge}, as if a lookup
 * had returned the outcome: the same compare-and-set on its phase, the same order, event and key's answer.
 */
@ApplicationScoped
public class ChargeNotices {

    private final CardPaymentRepository cards;
    private final CardCharge settlement;

    ChargeNotices(CardPaymentRepository cards, CardCharge settlement) {
        this.cards = cards;
        this.settlement = settlement;
    }

    /**
     * Applies {@code outcome} (definite: succeeded or declined) of the charge made under
     * {@code processorKey}, in {@code tx}, which the caller commits with whatever else it records;
     * {@code eventId} is written on the phase it moves the payment into. The payment stays locked
     * until {@code tx} ends, so nothing settles it between what this finds and what it records.
     */
    public Uni<Notice> apply(SqlConnection tx, String processorKey, ChargeOutcome outcome, String eventId) {
        if (outcome.report() == null) {
            throw new IllegalArgumentException("Only a definite outcome settles a payment: " + outcome);
        }
        return cards.lockByProcessorKey(tx, processorKey)
                .flatMap(payment -> Notice.of(payment, outcome.report(), () -> settlement.record(tx, payment, null, outcome, eventId)));
    }
}
