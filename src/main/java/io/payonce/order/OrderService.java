package io.payonce.order;

import io.payonce.account.AccountRepository;
import io.payonce.api.Answer;
import io.payonce.api.ApiException;
import io.payonce.api.Caller;
import io.payonce.api.DependencyFailure;
import io.payonce.api.DuplicateKey;
import io.payonce.api.ErrorCode;
import io.payonce.idempotency.Fingerprint;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.IdempotencyKey;
import io.payonce.idempotency.IdempotentCommand;
import io.payonce.idempotency.Result;
import io.payonce.metrics.DuplicateLayer;
import io.payonce.metrics.PayonceMetrics;
import io.payonce.token.Consumption;
import io.payonce.token.SubmitTokens;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

/** Creates orders and moves them through their states. */
@ApplicationScoped
public class OrderService {

    static final String CREATE = "create-order";
    private static final String ORDERS = "orders";
    private static final String SUBMIT_TOKEN = "submit-token";

    private static final Logger LOG = Logger.getLogger(OrderService.class);
    /** Status only moves forward, so a few re-reads settle any race between transition requests. */
    private static final int TRANSITION_ATTEMPTS = 4;

    private final OrderRepository orders;
    private final AccountRepository accounts;
    private final SubmitTokens tokens;
    private final IdempotencyGuard guard;
    private final Pool pool;
    private final PayonceMetrics metrics;

    public OrderService(OrderRepository orders, AccountRepository accounts, SubmitTokens tokens, IdempotencyGuard guard,
                        Pool pool, PayonceMetrics metrics) {
        this.orders = orders;
        this.accounts = accounts;
        this.tokens = tokens;
        this.guard = guard;
        this.pool = pool;
        this.metrics = metrics;
    }

    /** Creates an order under the caller's Idempotency-Key. */
    public Uni<Answer> createWithKey(String userId, IdempotencyKey key, NewOrderRequest request, String instance) {
        NewOrder order = request.forUser(userId);
        return guard.run(guard.command(userId, key, CREATE, ORDERS, request, instance), tx -> insert(tx, order, null));
    }

    /**
     * Creates the order a submit token stands for. Redis proves that the token was issued to this
     * caller; the token (as a digest) is then the submission's Idempotency-Key, claimed in the order's own
     * transaction. So every repeat of one submission (a double click, a retry after a timeout, a
     * retry after the first attempt died between Redis and the database) gets the first answer byte
     * for byte, or completes the submission if nothing was written: exactly one order either way.
     */
    public Uni<Answer> createWithToken(String userId, String submitToken, NewOrderRequest request, String instance) {
        IdempotentCommand command = guard.command(userId, keyOf(submitToken), CREATE, ORDERS, request, instance);
        return tokens.consume(submitToken, userId).onItemOrFailure().transformToUni((consumption, failure) -> {
            if (failure != null) {
                // Without Redis the token cannot be checked, but a stored answer still proves the submission.
                return DependencyFailure.isTransient(failure) ? storedAnswerOr(command, failure) : Uni.createFrom().failure(failure);
            }
            if (consumption == Consumption.UNKNOWN) {
                return storedAnswerOr(command, new ApiException(ErrorCode.SUBMIT_TOKEN_INVALID));
            }
            return guard.run(command, tx -> insert(tx, request.forUser(userId), submitToken));
        }).onFailure(ApiException.class).transform(OrderService::inTokenTerms);
    }

    /**
     * The client sent a submit token, not an Idempotency-Key: a twin in flight is the token in use,
     * and the token sent again with other content is a form already submitted.
     */
    private static Throwable inTokenTerms(Throwable failure) {
        return switch (((ApiException) failure).code()) {
            case IDEMPOTENCY_KEY_IN_USE -> new ApiException(ErrorCode.SUBMIT_TOKEN_IN_USE);
            case IDEMPOTENCY_KEY_REUSED -> new ApiException(ErrorCode.SUBMIT_TOKEN_INVALID);
            default -> failure;
        };
    }

    /** A digest of the token names the submission, so that records and log lines never hold a token. */
    private static IdempotencyKey keyOf(String submitToken) {
        return new IdempotencyKey(Fingerprint.of(SUBMIT_TOKEN, "", submitToken).sha256());
    }

    /** The submission's stored answer, replayed; without one, {@code otherwise}. */
    private Uni<Answer> storedAnswerOr(IdempotentCommand command, Throwable otherwise) {
        return guard.storedAnswer(command).flatMap(stored -> stored != null
                ? Uni.createFrom().item(stored)
                : Uni.createFrom().failure(otherwise));
    }

    /**
     * Inserts the order, or answers with the caller's order that already has this number and the
     * same content; another content under the number is a recorded 409 ORDER_SN_CONFLICT.
     */
    private Uni<Result> insert(SqlClient tx, NewOrder order, String submitToken) {
        return requireAccountCurrency(tx, order)
                .flatMap(held -> orders.insert(tx, order, submitToken))
                .flatMap(id -> orders.findById(tx, id))
                .invoke(created -> LOG.infof("Order %d created (sn %s, user %s, amount %d %s)",
                        created.id(), created.orderSn(), created.userId(), created.amount(), created.currency()))
                .onFailure(DuplicateKey::is).recoverWithUni(() -> orders.findBySn(tx, order.userId(), order.orderSn()).map(existing -> {
                    if (existing == null || !existing.sameContentAs(order)) {
                        throw new ApiException(ErrorCode.ORDER_SN_CONFLICT, order.orderSn());
                    }
                    metrics.duplicateCaught(CREATE, DuplicateLayer.UNIQUE_INDEX);
                    return existing;
                }))
                .map(created -> Result.created(OrderView.of(created), "/orders/" + created.id()));
    }

    /**
     * An order in a currency its owner's account does not hold could never be paid: refused now with
     * the code pay would give. A user without an account yet may still order; pay then needs one.
     */
    private Uni<Void> requireAccountCurrency(SqlClient tx, NewOrder order) {
        return accounts.find(tx, order.userId()).invoke(account -> {
            if (account != null && !account.currency().equals(order.currency())) {
                throw new ApiException(ErrorCode.CURRENCY_MISMATCH, order.currency(), account.currency());
            }
        }).replaceWithVoid();
    }

    public Uni<Order> find(Caller caller, long id) {
        return find(pool, caller, id);
    }

    /** The order if the caller may see it; another user's order is as missing as a missing one. */
    public Uni<Order> find(SqlClient client, Caller caller, long id) {
        return orders.findById(client, id).map(order -> visibleTo(caller, id, order));
    }

    /**
     * The caller's own order. Paying spends the owner's balance, so it is the owner's act alone,
     * whatever other roles the caller holds; anyone else finds no such order.
     */
    public Uni<Order> findOwn(SqlClient client, Caller caller, long id) {
        return orders.findById(client, id).map(order -> {
            if (order == null || !order.userId().equals(caller.userId())) {
                throw new ApiException(ErrorCode.ORDER_NOT_FOUND, id);
            }
            return order;
        });
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

    private static Order visibleTo(Caller caller, long id, Order order) {
        if (order == null || !caller.maySee(order.userId())) {
            throw new ApiException(ErrorCode.ORDER_NOT_FOUND, id);
        }
        return order;
    }
}
