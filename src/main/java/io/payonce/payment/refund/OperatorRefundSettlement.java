package io.payonce.payment.refund;

import io.payonce.errors.ErrorCode;
import io.payonce.events.EventType;
import io.payonce.idempotency.KeyedWrite;
import io.payonce.payment.operation.OperatorSettlementKind;
import io.payonce.processor.Processor;
import io.payonce.processor.RefundOutcome;
import io.smallrye.mutiny.Multi;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlConnection;
import jakarta.inject.Singleton;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The refund to the card's part of an operator's settlement ({@code OperatorSettlements}): what the
 * processor must confirm is {@link RefundProcessorVerdict}'s, and a settled refund is recorded as
 * {@link RefundToCard} records the processor's own outcome, under its order's row lock, with the audit row.
 */
@Singleton
class OperatorRefundSettlement extends OperatorSettlementKind<CardRefund, RefundSettlementRequest> {

    /** A refund settled as not refunded fails settled_not_refunded, which its 402 names; its audit row keeps 2000 characters. */
    private static final Words WORDS = new Words(ErrorCode.REFUND_NOT_FOUND, ErrorCode.REFUND_ALREADY_RECORDED, "settled_not_refunded", 2000,
            EventType.REFUND_SETTLED_BY_OPERATOR);

    private final Pool pool;
    private final OperatorRefundSettlementRepository settlements;
    private final Processor processor;

    OperatorRefundSettlement(Pool pool, OperatorRefundSettlementRepository settlements, RefundToCard outcomes, Processor processor) {
        super(WORDS, settlements, outcomes);
        this.pool = pool;
        this.settlements = settlements;
        this.processor = processor;
    }

    @Override
    protected Uni<String> askProcessor(CardRefund refund, RefundSettlementRequest request) {
        if (request.succeeded()) {
            return processor.refundUnder(refund.processorKey()).flatMap(underKey -> processor.refundById(request.processorRefundId())
                    .map(named -> RefundProcessorVerdict.refunded(refund, request.processorId(), underKey, named)));
        }
        // payonce's record first: a refund of the charge that succeeds meanwhile shows at the processor alone, and
        // refuses; read the other way round, one recorded meanwhile could stand in for this one.
        // The charge's total last: a refund made meanwhile then shows in it, beyond what the lookups before it counted.
        return settlements.recordedOfCharge(pool, refund)
                .flatMap(recorded -> processor.refundUnder(refund.processorKey())
                        .flatMap(underKey -> acknowledged(request)
                                .flatMap(acknowledged -> processor.chargeById(refund.chargeId())
                                        .map(charge -> RefundProcessorVerdict.notRefunded(refund, underKey, charge, recorded, acknowledged)))));
    }

    /** The refunds the operator acknowledges, each as the processor describes it now, by its id, in the order named. */
    private Uni<Map<String, RefundOutcome>> acknowledged(RefundSettlementRequest request) {
        if (request.acknowledgedRefunds().isEmpty()) {
            return Uni.createFrom().item(Map.of());
        }
        return Multi.createFrom().iterable(request.acknowledgedRefunds())
                .onItem().transformToUniAndConcatenate(id -> processor.refundById(id).map(outcome -> Map.entry(id, outcome)))
                .collect().in(LinkedHashMap::new, (found, entry) -> found.put(entry.getKey(), entry.getValue()));
    }

    @Override
    protected Uni<Object> audit(SqlConnection tx, CardRefund refund, RefundSettlementRequest request, KeyedWrite write, String said) {
        RefundPhase phase = request.succeeded() ? RefundPhase.SUCCEEDED : RefundPhase.FAILED;
        return settlements.insertAudit(tx, refund.id(), write, request, said)
                .replaceWith(new RefundSettlementView(refund.id(), refund.orderId(), phase, request.outcome(), request.processorIdShown(),
                        request.acknowledgedRefunds(), request.reason(), write.scope(), said));
    }
}
