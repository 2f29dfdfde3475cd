package io.payonce.order;

import io.payonce.auth.Caller;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.idempotency.KeyedWrite;
import io.payonce.idempotency.WithRecord;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;

/**
 * Who may see and act on an order. An order the caller may not see is answered exactly like one
 * that does not exist, so that order ids reveal nothing about other users.
 */
@ApplicationScoped
public class OrderAccess {

    private final OrderRepository orders;
    private final Pool pool;

    OrderAccess(OrderRepository orders, Pool pool) {
        this.orders = orders;
        this.pool = pool;
    }

    public Uni<Order> find(Caller caller, long id) {
        return find(pool, caller, id);
    }

    /** The order if the caller may see it: its owner, or ops. */
    public Uni<Order> find(SqlClient client, Caller caller, long id) {
        return orders.findById(client, id).map(order -> visibleTo(caller, id, order));
    }

    /**
     * The caller's own order, read with {@code write}'s record in one statement. Paying spends the
     * owner's balance, so it is the owner's act alone, whatever other roles the caller holds; anyone
     * else finds no such order.
     */
    public Uni<WithRecord<Order>> findOwnWithRecord(SqlClient client, Caller caller, long id, KeyedWrite write) {
        return orders.findWithRecord(client, id, write).map(found -> found.map(order -> {
            if (order == null || !order.userId().equals(caller.userId())) {
                throw new ApiException(ErrorCode.ORDER_NOT_FOUND, id);
            }
            return order;
        }));
    }

    /** Like {@link #find}, taking the order's row lock for the rest of the caller's transaction. */
    public Uni<Order> lock(SqlClient tx, Caller caller, long id) {
        return orders.lockById(tx, id).map(order -> visibleTo(caller, id, order));
    }

    private static Order visibleTo(Caller caller, long id, Order order) {
        if (order == null || !caller.maySee(order.userId())) {
            throw new ApiException(ErrorCode.ORDER_NOT_FOUND, id);
        }
        return order;
    }
}
