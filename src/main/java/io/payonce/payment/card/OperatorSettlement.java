package io.payonce.payment.card;

import io.payonce.config.PayonceConfig;
import io.payonce.errors.ErrorCode;
import io.payonce.events.EventType;
import io.payonce.idempotency.KeyedWrite;
import io.payonce.payment.PaymentPhase;
import io.payonce.payment.operation.OperatorSettlementKind;
import io.payonce.processor.Processor;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.inject.Singleton;

import java.time.Duration;

/**
 * The card payment's part of an operator's settlement ({@code OperatorSettlements}): what the
 * processor must confirm is {@link ProcessorVerdict}'s, and a settled payment is recorded as
 * {@link CardCharge} records the processor's own outcome, with the audit row.
 */
@Singleton
class OperatorSettlement extends OperatorSettlementKind<CardPayment, SettlementRequest> {

    /** A payment settled as not charged is declined settled_not_charged, which the client's 402 names; its audit row keeps 1000 characters. */
    private static final Words WORDS = new Words(ErrorCode.PAYMENT_NOT_FOUND, ErrorCode.CHARGE_ALREADY_RECORDED, "settled_not_charged", 1000,
            EventType.PAYMENT_SETTLED_BY_OPERATOR);

    private final OperatorSettlementRepository settlements;
    private final Processor processor;
    private final Duration keyRetention;

    OperatorSettlement(OperatorSettlementRepository settlements, CardCharge outcomes, Processor processor, PayonceConfig config) {
        super(WORDS, settlements, outcomes);
        this.settlements = settlements;
        this.processor = processor;
        this.keyRetention = config.processor().keyRetention();
    }

    @Override
    protected Uni<String> askProcessor(CardPayment payment, SettlementRequest request) {
        return processor.chargeUnder(payment.processorKey()).flatMap(underKey -> request.succeeded()
                ? processor.chargeById(request.chargeId()).map(named -> ProcessorVerdict.charged(payment, request.processorId(), underKey, named))
                : processor.chargesFor(payment.reference()).map(forOrder -> ProcessorVerdict.notCharged(payment, underKey, forOrder, keyRetention)));
    }

    @Override
    protected Uni<Object> audit(SqlConnection tx, CardPayment payment, SettlementRequest request, KeyedWrite write, String said) {
        PaymentPhase phase = request.succeeded() ? PaymentPhase.SUCCEEDED : PaymentPhase.DECLINED;
        return settlements.insertAudit(tx, payment.id(), write, request, said)
                .replaceWith(new SettlementView(payment.id(), payment.orderId(), phase, request.outcome(), request.processorIdShown(), request.reason(),
                        write.scope(), said));
    }
}
