package io.payonce.order;

import io.payonce.api.ApiException;
import io.payonce.api.Caller;
import io.payonce.api.DependencyFailure;
import io.payonce.api.DuplicateKey;
import io.payonce.api.ErrorCode;
import io.payonce.idempotency.Result;
import io.payonce.metrics.DuplicateLayer;
import io.payonce.metrics.PayonceMetrics;
import io.payonce.token.SubmitTokens;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

import java.time.Duration;

/** Creates orders and moves them through their states. */
@ApplicationScoped
public class OrderService {

    static final String CREATE = "create-order";

    private static final Logger LOG = Logger.getLogger(OrderService.class);
    /** How long a double-click waits for its twin to finish writing the order before it is told to retry. */
    private static final Duration TWIN_WAIT_STEP = Duration.ofMillis(25);
    private static final int TWIN_WAIT_ATTEMPTS = 8;
    /** Status only moves forward, so a few re-reads settle any race between transition requests. */
    private static final int TRANSITION_ATTEMPTS = 4;

    private final OrderRepository orders;
    private final SubmitTokens tokens;
    private final Pool pool;
    private final PayonceMetrics metrics;

    public OrderService(OrderRepository orders, SubmitTokens tokens, Pool pool, PayonceMetrics metrics) {
        this.orders = orders;
        this.tokens = tokens;
        this.pool = pool;
        this.metrics = metrics;
    }

    /**
     * Creates the order a submit token stands for. The token is consumed first, atomically; a
     * repeat of the same submission finds the order its twin created and answers with it.
     */
    public Uni<OrderCreation> create(String submitToken, NewOrder order) {
        return tokens.consume(submitToken, order.userId())
                .flatMap(consumption -> switch (consumption) {
                    case CONSUMED -> insertConsumed(submitToken, order);
                    case CONSUMED_BEFORE -> awaitTwin(submitToken, order.userId());
                    case UNKNOWN -> replayOrReject(submitToken, order.userId());
                });
    }

    /** Creates an order inside an Idempotency-Key transaction; the same business number answers with its order. */
    public Uni<Result> createInTransaction(SqlClient tx, NewOrder order) {
        return orders.insert(tx, order, null)
                .flatMap(id -> orders.findById(tx, id))
                .invoke(created -> LOG.infof("Order %d created (sn %s, user %s)", created.id(), created.orderSn(), created.userId()))
                .onFailure(DuplicateKey::is).recoverWithUni(() -> orders.findBySn(tx, order.orderSn()).map(existing -> {
                    if (existing == null || !existing.sameContentAs(order)) {
                        throw new ApiException(ErrorCode.ORDER_SN_CONFLICT, order.orderSn());
                    }
                    metrics.duplicateCaught(CREATE, DuplicateLayer.UNIQUE_INDEX);
                    return existing;
                }))
                .map(created -> Result.created(OrderView.of(created)));
    }

    public Uni<Order> find(Caller caller, long id) {
        return find(pool, caller, id);
    }

    /** The order if the caller may see it; another user's order is as missing as a missing one. */
    public Uni<Order> find(SqlClient client, Caller caller, long id) {
        return orders.findById(client, id).map(order -> visibleTo(caller, id, order));
    }

    /** Like {@link #find}, taking the order's row lock for the rest of the caller's transaction. */
    public Uni<Order> lock(SqlClient tx, Caller caller, long id) {
        return orders.lockById(tx, id).map(order -> visibleTo(caller, id, order));
    }

    /**
     * Moves the order by compare-and-set. Asking for the state the order is
     * already in is a harmless no-op; any other mismatch is an illegal transition.
     */
    public Uni<StatusChange> apply(Caller caller, long id, Transition transition) {
        return apply(pool, caller, id, transition);
    }

    public Uni<StatusChange> apply(SqlClient client, Caller caller, long id, Transition transition) {
        return find(client, caller, id).flatMap(order -> moveTo(client, order, transition, TRANSITION_ATTEMPTS));
    }

    private Uni<StatusChange> moveTo(SqlClient client, Order order, Transition transition, int attemptsLeft) {
        OrderStatus target = transition.target();
        if (order.status() == target) {
            metrics.duplicateCaught(transition.operation(), DuplicateLayer.STATE_CAS);
            return Uni.createFrom().item(new StatusChange(order, false));
        }
        if (!order.status().canBecome(target) || attemptsLeft == 0) {
            return Uni.createFrom().failure(order.illegalTransitionTo(target));
        }
        return orders.compareAndSetStatus(client, order.id(), order.status(), target)
                .flatMap(moved -> orders.findById(client, order.id())
                        .flatMap(current -> moved
                                ? Uni.createFrom().item(new StatusChange(current, true))
                                : moveTo(client, current, transition, attemptsLeft - 1)));
    }

    private Uni<OrderCreation> insertConsumed(String submitToken, NewOrder order) {
        return orders.insert(order, submitToken)
                .flatMap(orders::findById)
                .map(created -> {
                    LOG.infof("Order %d created (sn %s, user %s, amount %d %s)",
                            created.id(), created.orderSn(), created.userId(), created.amount(), created.currency());
                    return new OrderCreation(created, false);
                })
                .onFailure(DuplicateKey::is).recoverWithUni(() -> existingFor(submitToken, order))
                .onFailure(DependencyFailure::isTransient).call(() -> giveBack(submitToken, order.userId()));
    }

    /** Best effort: if Redis is down too, the client reloads the form, which is safe. */
    private Uni<Void> giveBack(String submitToken, String userId) {
        return tokens.restore(submitToken, userId)
                .onFailure().invoke(e -> LOG.warnf("Submit token not restored after a failed insert: %s", e.toString()))
                .onFailure().recoverWithNull();
    }

    /** The insert hit a unique key: the same submission or the same business number was there first. */
    private Uni<OrderCreation> existingFor(String submitToken, NewOrder order) {
        return orders.findBySubmitToken(submitToken).flatMap(byToken -> {
            if (byToken != null && byToken.userId().equals(order.userId())) {
                return Uni.createFrom().item(replayed(byToken, DuplicateLayer.UNIQUE_INDEX));
            }
            return orders.findBySn(order.orderSn()).map(bySn -> {
                if (bySn != null && bySn.sameContentAs(order)) {
                    return replayed(bySn, DuplicateLayer.UNIQUE_INDEX);
                }
                throw new ApiException(ErrorCode.ORDER_SN_CONFLICT, order.orderSn());
            });
        });
    }

    /** The twin consumed the token a moment ago; its order appears as soon as its INSERT commits. */
    private Uni<OrderCreation> awaitTwin(String submitToken, String userId) {
        return Uni.createFrom().deferred(() -> orders.findBySubmitToken(submitToken))
                .map(order -> {
                    if (order == null) {
                        throw new TwinStillWriting();
                    }
                    return order;
                })
                .onFailure(TwinStillWriting.class).retry().withBackOff(TWIN_WAIT_STEP).atMost(TWIN_WAIT_ATTEMPTS)
                .onFailure(TwinStillWriting.class).transform(e -> new ApiException(ErrorCode.SUBMIT_TOKEN_IN_USE))
                .map(order -> replayFor(order, userId));
    }

    private Uni<OrderCreation> replayOrReject(String submitToken, String userId) {
        return orders.findBySubmitToken(submitToken).map(order -> replayFor(order, userId));
    }

    private OrderCreation replayFor(Order order, String userId) {
        if (order == null || !order.userId().equals(userId)) {
            throw new ApiException(ErrorCode.SUBMIT_TOKEN_INVALID);
        }
        return replayed(order, DuplicateLayer.TOKEN);
    }

    private OrderCreation replayed(Order order, DuplicateLayer layer) {
        metrics.duplicateCaught(CREATE, layer);
        return new OrderCreation(order, true);
    }

    private static Order visibleTo(Caller caller, long id, Order order) {
        if (order == null || !caller.maySee(order.userId())) {
            throw new ApiException(ErrorCode.ORDER_NOT_FOUND, id);
        }
        return order;
    }

    /** Signals, only inside {@link #awaitTwin}, that the twin's order is not visible yet. */
    private static final class TwinStillWriting extends RuntimeException {
        TwinStillWriting() {
            super(null, null, false, false);
        }
    }
}
