package io.payonce.client;

/**
 * How an operation ended for the caller, always with the key it went under: resume an operation that
 * is {@link Pending} by calling it again with that key, and it ends as it did at the server, once.
 *
 * @param <T> what the operation makes: a {@link Payment}, a {@link Refund}, an {@link Order}, a {@link Deposit}
 */
public sealed interface Outcome<T> {

    /** The operation's key (for an order made with a submit token, that token); null for a read. */
    String key();

    /**
     * It happened: the money moved, the order exists, the read found it. {@code replayed} when the
     * answer was the one stored for the first request ({@code Idempotent-Replayed}): a repeat, of this
     * call or of an earlier one under the same key, or, for a pay, of the order's earlier payment.
     */
    record Succeeded<T>(String key, T value, boolean replayed) implements Outcome<T> {
    }

    /**
     * The money did not move, and will not under this key: 402, with the problem's {@code code}
     * ({@code INSUFFICIENT_FUNDS}, {@code CARD_DECLINED} with its {@code declineCode},
     * {@code REFUND_FAILED} with its {@code failureCode}). A new attempt needs a new key.
     */
    record Declined<T>(String key, Problem problem) implements Outcome<T> {
    }

    /**
     * Not known yet: the deadline or the attempts ran out before a definite answer (no answer came,
     * the server was busy, or a card's processor has not said). Never a failure: the operation may
     * have happened, or may still. Call it again with {@link #key()} later; {@code id} is the payment's
     * or refund's id when an answer named one (a 202), null otherwise.
     */
    record Pending<T>(String key, Long id, String lastAnswer) implements Outcome<T> {
    }

    /**
     * A definite answer that is no success: a refusal payonce stores under the key (the order is not
     * there or not payable, a refund exceeds the payment: {@link Codes#RECORDED}), a key reused for
     * another request (422), or, before any request may have taken effect, any refusal (the request was
     * invalid, the token refused). After a request that may have taken effect, a refusal stored nowhere
     * is {@link Pending}, never this. {@code problem.code()} says which.
     */
    record Refused<T>(String key, Problem problem) implements Outcome<T> {
    }
}
