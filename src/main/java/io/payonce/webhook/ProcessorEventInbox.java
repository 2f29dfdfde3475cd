package io.payonce.webhook;

import io.payonce.db.Rows;
import io.payonce.db.UniqueKey;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;
import io.vertx.mutiny.sqlclient.Tuple;
import jakarta.enterprise.context.ApplicationScoped;

/** SQL for the inbox of the processor's webhook events: one row per event id, written with the event's effect. */
@ApplicationScoped
class ProcessorEventInbox {

    /** UNIQUE(event_id): a second delivery waits here until the first commits, then is refused. */
    private static final String CLAIM = """
            INSERT INTO processor_event (event_id, event_type, object_id, processor_key, outcome)
            VALUES (?, ?, ?, ?, 'RECEIVED')""";

    private static final String RECORD = "UPDATE processor_event SET outcome = ?, payment_id = ?, refund_id = ? "
            + "WHERE event_id = ? AND outcome = 'RECEIVED'";

    private static final String SELECT_OUTCOME = "SELECT outcome FROM processor_event WHERE event_id = ?";

    /** True when this transaction now holds the event; false when another delivery of it was recorded first. */
    Uni<Boolean> claim(SqlConnection tx, ProcessorEvent event) {
        return UniqueKey.insertOr(tx.preparedQuery(CLAIM)
                        .execute(Tuple.of(event.id(), event.type(), event.objectId(), event.keyAsKept())).replaceWith(true),
                () -> Uni.createFrom().item(false));
    }

    /** What the event did, in the transaction that claimed it, with the payment or the refund of payonce's it named, if any. */
    Uni<Void> record(SqlConnection tx, String eventId, ProcessorWebhooks.Effect effect) {
        return tx.preparedQuery(RECORD).execute(Tuple.of(effect.outcome().name(), effect.paymentId(), effect.refundId(), eventId)).map(rows -> {
            if (rows.rowCount() != 1) {
                throw new IllegalStateException("Processor event " + eventId + " was not held by the transaction recording it");
            }
            return null;
        });
    }

    /** What a recorded event did; null while no delivery of it is recorded. */
    Uni<WebhookOutcome> outcomeOf(SqlClient client, String eventId) {
        return client.preparedQuery(SELECT_OUTCOME).execute(Tuple.of(eventId)).map(rows -> {
            Row row = Rows.first(rows);
            return row == null ? null : WebhookOutcome.valueOf(row.getString("outcome"));
        });
    }
}
