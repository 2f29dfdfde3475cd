package io.payonce.client;

import java.util.Set;

/**
 * The problem codes after which payonce asks for the same request again, under the same key, once
 * what holds it has passed (each answer carries {@code Retry-After}); every other code settles the
 * operation. The server's list is the source: a test holds this one to it.
 */
public final class Codes {

    public static final Set<String> RETRY_WITH_THE_SAME_KEY = Set.of(
            "IDEMPOTENCY_KEY_IN_USE",   // a request under the key is being answered: a double click, an earlier retry
            "PAYMENT_IN_PROGRESS",      // the order is being paid under another key
            "CARD_PAYMENT_PENDING",     // the order's card payment is not known yet
            "REFUND_PENDING",           // the refund's processor outcome is not known yet
            "SUBMIT_TOKEN_IN_USE",      // an order form under the token is being created
            "WORKER_HOLDS_LEASE",       // another worker holds the operation for now
            "DEPENDENCY_UNAVAILABLE",   // a store payonce needs does not answer (503)
            "PROCESSOR_UNAVAILABLE");   // the card processor does not answer (503)

    /**
     * The refusals payonce stores under the key, like a success, and answers every repeat with: the
     * operation's outcome, as final as a 201. Every other refusal is stored nowhere (a token refused, a
     * path not found), so after a request that may have taken effect it settles nothing. A test holds
     * this list to the server's too.
     */
    public static final Set<String> RECORDED = Set.of(
            "INSUFFICIENT_FUNDS", "CARD_DECLINED", "REFUND_FAILED", "ORDER_NOT_FOUND", "ACCOUNT_NOT_FOUND", "ILLEGAL_TRANSITION",
            "ORDER_SN_CONFLICT", "CURRENCY_MISMATCH", "REFUND_EXCEEDS_PAYMENT", "REFUND_NO_CONFLICT", "ALREADY_APPLIED",
            "CHARGE_NOT_RECORDED");

    private Codes() {
    }
}
