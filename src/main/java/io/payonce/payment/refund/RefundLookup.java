package io.payonce.payment.refund;

import io.payonce.db.Rows;
import io.payonce.db.UtcTimes;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.order.OrderStatus;
import io.payonce.payment.PaymentMethod;
import io.payonce.payment.PhaseHistory;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;

/** Reads a refund, its history ({@link PhaseHistory}) and an operator's settlement and reversal of it (only ops read refunds). */
@ApplicationScoped
class RefundLookup {

    private static final String SELECT = """
            SELECT r.id, r.order_id, r.user_id, r.refund_no, r.amount, o.currency, r.method, r.phase, r.processor_key,
                r.processor_charge_id, r.processor_refund_id, r.failure_code, r.created_at, r.updated_at
            FROM refund_record r JOIN orders o ON o.id = r.order_id WHERE r.id = ?""";

    private static final String SELECT_HISTORY = "SELECT phase, detail, created_at FROM refund_phase WHERE refund_id = ? ORDER BY id";

    private static final String SELECT_SETTLEMENT = """
            SELECT outcome, processor_refund_id, acknowledged, reason, operator_id, processor_said, created_at FROM refund_settlement WHERE refund_id = ?""";

    /** PRIMARY KEY(refund_id): at most one. */
    private static final String SELECT_REVERSAL = """
            SELECT reason, operator_id, processor_said, order_before, order_after, created_at FROM refund_reversal WHERE refund_id = ?""";

    private final Pool pool;

    RefundLookup(Pool pool) {
        this.pool = pool;
    }

    Uni<RefundDetails> find(long id) {
        return pool.preparedQuery(SELECT).execute(Tuple.of(id)).flatMap(rows -> {
            Row row = Rows.first(rows);
            if (row == null) {
                return Uni.createFrom().failure(new ApiException(ErrorCode.REFUND_NOT_FOUND, id));
            }
            return PhaseHistory.of(pool, SELECT_HISTORY, row,
                            (phase, detail, at) -> new RefundDetails.PhaseEntry(RefundPhase.valueOf(phase), detail, at))
                    .flatMap(history -> settlement(row).flatMap(settlement -> reversal(row)
                            .map(reversal -> details(row, history, settlement, reversal))));
        });
    }

    private Uni<RefundDetails.Settlement> settlement(Row refund) {
        return pool.preparedQuery(SELECT_SETTLEMENT).execute(Tuple.of(refund.getLong("id"))).map(rows -> Rows.first(rows, row -> {
            String acknowledged = row.getString("acknowledged");
            return new RefundDetails.Settlement(row.getString("outcome"), row.getString("processor_refund_id"),
                    acknowledged == null ? List.of() : List.of(acknowledged.split(",")), row.getString("reason"), row.getString("operator_id"),
                    row.getString("processor_said"), UtcTimes.instant(row, "created_at"));
        }));
    }

    private Uni<RefundDetails.Reversal> reversal(Row refund) {
        return pool.preparedQuery(SELECT_REVERSAL).execute(Tuple.of(refund.getLong("id"))).map(rows -> Rows.first(rows, row -> new RefundDetails.Reversal(
                row.getString("reason"), row.getString("operator_id"), row.getString("processor_said"),
                OrderStatus.valueOf(row.getString("order_before")), OrderStatus.valueOf(row.getString("order_after")),
                UtcTimes.instant(row, "created_at"))));
    }

    private static RefundDetails details(Row row, List<RefundDetails.PhaseEntry> history, RefundDetails.Settlement settlement,
                                         RefundDetails.Reversal reversal) {
        return new RefundDetails(row.getLong("id"), row.getLong("order_id"), row.getString("user_id"), row.getString("refund_no"),
                row.getLong("amount"), row.getString("currency"), PaymentMethod.valueOf(row.getString("method")),
                RefundPhase.valueOf(row.getString("phase")), row.getString("processor_key"), row.getString("processor_charge_id"),
                row.getString("processor_refund_id"), row.getString("failure_code"), UtcTimes.instant(row, "created_at"),
                UtcTimes.instant(row, "updated_at"), history, settlement, reversal);
    }
}
