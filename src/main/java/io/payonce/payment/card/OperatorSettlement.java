package io.payonce.payment.card;

import io.payonce.account.EntryType;
import io.payonce.config.PayonceConfig;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.events.Outbox;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.KeyedWrite;
import io.payonce.idempotency.WithRecord;
import io.payonce.payment.PaymentPhase;
import io.payonce.payment.operation.OperatorSettlementKind;
import io.payonce.payment.operation.SettlementTarget;
import io.payonce.processor.Processor;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.enterprise.context.ApplicationScoped;

import java.time.Duration;

/**
 * The card payment's part of an operator's settlement ({@code OperatorSettlements}): the processor
 * must confirm what the operator says (the charge they name is this payment's, and the payment's own
 * key holds no other; or neither the key nor the processor's list of the order's charges holds one
 * that was not declined), and a settled payment is recorded exactly as the processor's own outcome
 * would be ({@link CardSettlement}: the order, the event, the client's answer under the client's
 * key), with the audit row and the settlement's event.
 */
@ApplicationScoped
class OperatorSettlement implements OperatorSettlementKind<CardPayment, SettlementRequest, ProcessorVerdict> {

    /** The decline code of a payment an operator settled as not charged: the client's 402 names it. */
    static final String SETTLED_NOT_CHARGED = "settled_not_charged";

    private final OperatorSettlementRepository settlements;
    private final CardSettlement outcomes;
    private final Processor processor;
    private final Outbox outbox;
    private final Duration keyRetention;

    OperatorSettlement(OperatorSettlementRepository settlements, CardSettlement outcomes, Processor processor, Outbox outbox,
                       PayonceConfig config) {
        this.settlements = settlements;
        this.outcomes = outcomes;
        this.processor = processor;
        this.outbox = outbox;
        this.keyRetention = config.processor().keyRetention();
    }

    @Override
    public ApiException notFound(long id) {
        return new ApiException(ErrorCode.PAYMENT_NOT_FOUND, id);
    }

    @Override
    public Uni<WithRecord<SettlementTarget<CardPayment>>> findWithRecord(SqlClient client, long id, KeyedWrite write) {
        return settlements.findWithRecord(client, id, write);
    }

    @Override
    public Uni<SettlementTarget<CardPayment>> find(SqlClient client, long id) {
        return settlements.find(client, id);
    }

    /**
     * The charge under the payment's key and, for charged, the charge the operator names, or, for not
     * charged, the processor's list of the order's charges.
     */
    @Override
    public Uni<ProcessorVerdict> askProcessor(CardPayment payment, SettlementRequest request) {
        return processor.chargeUnder(payment.processorKey()).flatMap(underKey -> request.charged()
                ? processor.chargeById(request.chargeId()).map(named -> ProcessorVerdict.charged(payment, request, underKey, named))
                : processor.chargesFor(payment.reference()).map(forOrder -> ProcessorVerdict.notCharged(payment, underKey, forOrder, keyRetention)));
    }

    @Override
    public Uni<Answer> record(SqlConnection tx, CardPayment payment, SettlementRequest request, Duration window, KeyedWrite write,
                              ProcessorVerdict verdict) {
        Uni<Boolean> moved = request.charged()
                ? settlements.succeed(tx, payment, request.chargeId(), window)
                : settlements.decline(tx, payment, SETTLED_NOT_CHARGED, window);
        return moved.flatMap(settled -> settled ? recordSettled(tx, payment, write, request, verdict.said()) : Uni.createFrom().nullItem());
    }

    private Uni<Answer> recordSettled(SqlConnection tx, CardPayment payment, KeyedWrite write, SettlementRequest request, String said) {
        String operator = write.scope();
        PaymentPhase phase = request.charged() ? PaymentPhase.SUCCEEDED : PaymentPhase.DECLINED;
        Uni<Answer> clientsAnswer = request.charged()
                ? outcomes.charged(tx, payment, "charge " + request.chargeId() + ", settled by an operator")
                : outcomes.notCharged(tx, payment, SETTLED_NOT_CHARGED, SETTLED_NOT_CHARGED + ", settled by an operator");
        return clientsAnswer
                .flatMap(v -> settlements.insertAudit(tx, payment.id(), operator, write.key().value(), request, said))
                .flatMap(v -> outbox.recordSettlement(tx, payment.userId(), payment.orderId(), EntryType.referenceOf(payment.id()),
                        payment.amount(), payment.currency(), write.key().value(), request.outcome().text()))
                .replaceWith(Answer.created(new SettlementView(payment.id(), payment.orderId(), phase, request.outcome(), request.chargeId(),
                        request.reason(), operator, said)));
    }
}
