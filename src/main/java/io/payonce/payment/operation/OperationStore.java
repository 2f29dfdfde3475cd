package io.payonce.payment.operation;

import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import io.vertx.mutiny.sqlclient.SqlConnection;

import java.time.Duration;
import java.util.List;

/**
 * What the lifecycle asks of a kind's table: each a compare-and-set fenced by the operation's
 * attempts as the worker holds them, so that the request, its retries and the recovery job on any
 * instance can race and only one moves the operation. The kind's SQL stays its own.
 */
public interface OperationStore<O extends Operation<O>> {

    /**
     * Moves a STARTED operation to SENT in {@code tx}, with its history line, its first send's time
     * and a lease of {@code lease} from now; true when this worker's first send is to be made.
     */
    Uni<Boolean> markSent(SqlConnection tx, O operation, Duration lease);

    /**
     * Counts a resend by the worker holding the operation, its time starting the window if no send
     * did; true only while that worker still holds it and the first send lies less than
     * {@code window} back, as the database's clock sees it now.
     */
    Uni<Boolean> markResent(SqlClient client, O operation, Duration window);

    /** True when this caller now owns the operation's next call for {@code lease}, as it read it (one more attempt). */
    Uni<Boolean> takeLease(SqlClient client, O operation, Duration lease);

    /** Unsettled operations whose lease has run out, the longest waiting first; at most {@code limit}. */
    Uni<List<O>> findUnattended(SqlClient client, int limit);

    /** Unsettled operations that began more than {@code age} ago. */
    Uni<Long> countOverdue(SqlClient client, Duration age);
}
