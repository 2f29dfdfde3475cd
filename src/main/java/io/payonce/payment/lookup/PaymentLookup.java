package io.payonce.payment.lookup;

import io.payonce.auth.Caller;
import io.payonce.db.Rows;
import io.payonce.db.UtcTimes;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.payment.PaymentMethod;
import io.payonce.payment.PaymentPhase;
import io.payonce.payment.PhaseHistory;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

import java.util.List;

/**
 * Reads a payment and its history ({@link PhaseHistory}) for its owner or ops; anyone else finds no
 * such payment, as with orders. Ops also see the audit row of an operator's settlement, which names
 * staff and their words, not the owner's business.
 */
@ApplicationScoped
class PaymentLookup {

    private static final String SELECT = """
            SELECT id, order_id, user_id, amount, currency, method, phase, processor_key, processor_charge_id, decline_code, created_at,
                updated_at
            FROM pay_record WHERE id = ?""";

    private static final String SELECT_HISTORY = "SELECT phase, detail, created_at FROM payment_phase WHERE payment_id = ? ORDER BY id";

    /** UNIQUE(payment_id): at most one. */
    private static final String SELECT_SETTLEMENT =
            "SELECT outcome, charge_id, reason, operator_id, processor_said, created_at FROM operator_settlement WHERE payment_id = ?";

    private final Pool pool;

    PaymentLookup(Pool pool) {
        this.pool = pool;
    }

    Uni<PaymentDetails> find(Caller caller, long id) {
        return pool.preparedQuery(SELECT).execute(Tuple.of(id)).flatMap(rows -> {
            Row row = Rows.first(rows);
            if (row == null || !caller.maySee(row.getString("user_id"))) {
                return Uni.createFrom().failure(new ApiException(ErrorCode.PAYMENT_NOT_FOUND, id));
            }
            return PhaseHistory.of(pool, SELECT_HISTORY, row,
                            (phase, detail, at) -> new PaymentDetails.PhaseEntry(PaymentPhase.valueOf(phase), detail, at))
                    .flatMap(history -> settlement(caller, row).map(settlement -> details(row, history, settlement)));
        });
    }

    private Uni<PaymentDetails.Settlement> settlement(Caller caller, Row payment) {
        if (!caller.ops()) {
            return Uni.createFrom().nullItem();
        }
        return pool.preparedQuery(SELECT_SETTLEMENT).execute(Tuple.of(payment.getLong("id"))).map(rows -> Rows.first(rows, row -> new PaymentDetails.Settlement(
                row.getString("outcome"), row.getString("charge_id"), row.getString("reason"), row.getString("operator_id"),
                row.getString("processor_said"), UtcTimes.instant(row, "created_at"))));
    }

    private static PaymentDetails details(Row row, List<PaymentDetails.PhaseEntry> history, PaymentDetails.Settlement settlement) {
        return new PaymentDetails(row.getLong("id"), row.getLong("order_id"), row.getString("user_id"), row.getLong("amount"),
                row.getString("currency"), PaymentMethod.valueOf(row.getString("method")), PaymentPhase.valueOf(row.getString("phase")),
                row.getString("processor_key"), row.getString("processor_charge_id"), row.getString("decline_code"),
                UtcTimes.instant(row, "created_at"), UtcTimes.instant(row, "updated_at"), history, settlement);
    }
}
