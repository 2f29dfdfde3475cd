package io.payonce.order;

import io.payonce.account.AccountRepository;
import io.payonce.db.DependencyFailure;
import io.payonce.db.UniqueKey;
import io.payonce.errors.ApiException;
import io.payonce.errors.ErrorCode;
import io.payonce.idempotency.Answer;
import io.payonce.idempotency.IdempotencyGuard;
import io.payonce.idempotency.KeyedRequest;
import io.payonce.idempotency.KeyedWrite;
import io.payonce.idempotency.Turn;
import io.payonce.idempotency.WriteOperation;
import io.payonce.metrics.RepeatDefence;
import io.payonce.token.Consumption;
import io.payonce.token.SubmitTokens;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.SqlClient;
import jakarta.enterprise.context.ApplicationScoped;
import org.jboss.logging.Logger;

/**
 * Creates orders, under an Idempotency-Key or under the one-time submit token of an order form.
 * Either way the order is inserted in the transaction that claims the key, and the caller's order
 * number is unique per user, so one submission makes one order.
 */
@ApplicationScoped
public class OrderCreation {

    private static final Logger LOG = Logger.getLogger(OrderCreation.class);

    private final OrderRepository orders;
    private final AccountRepository accounts;
    private final SubmitTokens tokens;
    private final IdempotencyGuard guard;

    OrderCreation(OrderRepository orders, AccountRepository accounts, SubmitTokens tokens, IdempotencyGuard guard) {
        this.orders = orders;
        this.accounts = accounts;
        this.tokens = tokens;
        this.guard = guard;
    }

    public Uni<Answer> withKey(String userId, KeyedRequest request, NewOrderRequest order) {
        return guard.run(request.by(userId, order), tx -> insert(tx, order.forUser(userId), null));
    }

    /**
     * Creates the order a submit token stands for. Redis proves that the token was issued to this
     * caller; the token (as a digest) is then the submission's key, claimed in the order's own
     * transaction. So every repeat of one submission (a double click, a retry after a timeout, a
     * retry after the first attempt died between Redis and the database) gets the first answer byte
     * for byte, or completes the submission if nothing was written: exactly one order either way.
     */
    public Uni<Answer> withToken(String userId, String submitToken, NewOrderRequest order, String instance) {
        KeyedWrite write = KeyedRequest.ofSubmitToken(WriteOperation.CREATE_ORDER, null, submitToken, instance).tagged()
                .by(userId, order);
        return guard.run(write, consumed(submitToken, userId), tx -> insert(tx, order.forUser(userId), submitToken))
                .onFailure(ApiException.class).transform(OrderCreation::inTokenTerms);
    }

    /**
     * The token consumed in Redis, by this request or by an earlier one of this caller, as the
     * submission's turn to run. A token Redis does not know is refused; without Redis the token
     * cannot be checked, and Redis's failure stands. Either way a stored answer under the token still
     * proves the submission, and answers it.
     */
    private Uni<Turn> consumed(String submitToken, String userId) {
        return tokens.consume(submitToken, userId)
                .map(consumption -> consumption == Consumption.UNKNOWN
                        ? Turn.refused(() -> new ApiException(ErrorCode.SUBMIT_TOKEN_INVALID))
                        : Turn.TAKEN)
                .onFailure(DependencyFailure::isTransient).recoverWithItem(failure -> Turn.refused(() -> failure));
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

    /**
     * Inserts the order, or answers with the caller's order that already has this number and the
     * same content, as a repeat; another content under the number is a recorded 409 ORDER_SN_CONFLICT.
     */
    private Uni<Answer> insert(SqlClient tx, NewOrder order, String submitToken) {
        Uni<Answer> inserted = requireAccountCurrency(tx, order)
                .flatMap(held -> orders.insert(tx, order, submitToken))
                .flatMap(id -> orders.findById(tx, id))
                .invoke(created -> LOG.infof("Order %d created (sn %s, user %s, amount %d %s)",
                        created.id(), created.orderSn(), created.userId(), created.amount(), created.currency()))
                .map(OrderCreation::answer);
        return UniqueKey.insertOr(inserted, () -> orders.findBySn(tx, order.userId(), order.orderSn()).map(existing -> {
            if (existing == null || !existing.sameContentAs(order)) {
                throw new ApiException(ErrorCode.ORDER_SN_CONFLICT, order.orderSn());
            }
            return answer(existing).repeatCaughtBy(RepeatDefence.UNIQUE_INDEX);
        }));
    }

    private static Answer answer(Order order) {
        return Answer.created(order, "/orders/" + order.id());
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
}
