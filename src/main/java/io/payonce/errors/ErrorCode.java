package io.payonce.errors;

import java.util.Locale;

/**
 * Every error a client can receive, with its HTTP status, its {@link Kind} and the words it is told.
 * The code is the stable part of the contract; titles and details may be reworded. The kind is the
 * one place a code is classified: what the key keeps, whether the answer carries Retry-After, what a
 * command consumer does with the message, and the advice a problem's page gives all follow from it.
 */
public enum ErrorCode {
    VALIDATION_FAILED(400, Kind.INVALID, "Request validation failed", "One or more fields are invalid; see errors."),
    MALFORMED_REQUEST(400, Kind.INVALID, "Malformed request body", "The body is not valid JSON for this endpoint: %s"),
    IDEMPOTENCY_KEY_MISSING(400, Kind.INVALID, "Idempotency-Key header missing", "This operation needs an Idempotency-Key header; reuse it on every retry."),
    IDEMPOTENCY_KEY_INVALID(400, Kind.INVALID, "Idempotency-Key header invalid", "An Idempotency-Key is 1 to 64 visible ASCII characters, bare or in double quotes."),
    SUBMIT_TOKEN_MISSING(400, Kind.INVALID, "Submit-Token header missing", "Send the token from GET /orders/token as Submit-Token, or an Idempotency-Key."),
    WEBHOOK_SIGNATURE_INVALID(400, Kind.INVALID, "Webhook signature invalid",
            "The Processor-Signature header does not verify this body: %s. Nothing was recorded."),
    SUBMIT_TOKEN_MALFORMED(400, Kind.INVALID, "Submit-Token header malformed", "A submit token is 1 to 64 characters of A-Z, a-z, 0-9, '-' and '_'."),
    INSUFFICIENT_FUNDS(402, Kind.RECORDED, "Insufficient funds", "The balance does not cover %d %s."),
    CARD_DECLINED(402, Kind.RECORDED, "Card declined", "The card was declined (%s); nothing was charged."),
    REFUND_FAILED(402, Kind.RECORDED, "Refund failed", "The card processor did not refund the card (%s); nothing was refunded, and this refund number is spent."),
    UNAUTHENTICATED(401, Kind.REFUSED, "Authentication required", "Send a valid bearer token in the Authorization header."),
    FORBIDDEN(403, Kind.REFUSED, "Forbidden", "Your role does not allow this operation."),
    NOT_FOUND(404, Kind.REFUSED, "Not found", "No resource exists at this path."),
    ORDER_NOT_FOUND(404, Kind.RECORDED, "Order not found", "Order %s does not exist."),
    ACCOUNT_NOT_FOUND(404, Kind.RECORDED, "Account not found", "No account exists for user %s."),
    PAYMENT_NOT_FOUND(404, Kind.REFUSED, "Payment not found", "Payment %s does not exist."),
    REFUND_NOT_FOUND(404, Kind.REFUSED, "Refund not found", "Refund %s does not exist."),
    METHOD_NOT_ALLOWED(405, Kind.REFUSED, "Method not allowed", "This path does not accept that method."),
    NOT_ACCEPTABLE(406, Kind.REFUSED, "Not acceptable", "This endpoint answers with application/json or application/problem+json."),
    IDEMPOTENCY_KEY_IN_USE(409, Kind.NOT_NOW, "Idempotency-Key in use", "A request with this key is still being processed; retry shortly with the same key."),
    PAYMENT_IN_PROGRESS(409, Kind.NOT_NOW, "Payment in progress", "Another payment of this order is in progress; retry shortly with the same key."),
    CARD_PAYMENT_PENDING(409, Kind.RETRY_LATER, "Card payment pending", "A card payment of this order is waiting for the processor's outcome; retry later with the same key."),
    REFUND_PENDING(409, Kind.RETRY_LATER, "Refund pending", "A refund of this order with this refund number is waiting for the card processor's outcome; retry later with the same key."),
    ILLEGAL_TRANSITION(409, Kind.RECORDED, "Illegal transition", "The order is %s and cannot become %s."),
    SUBMIT_TOKEN_INVALID(409, Kind.REFUSED, "Submit token invalid", "This form was already submitted or has expired: reload the form."),
    SUBMIT_TOKEN_IN_USE(409, Kind.NOT_NOW, "Submit token in use", "An order for this submit token is still being created; retry shortly."),
    ORDER_SN_CONFLICT(409, Kind.RECORDED, "Order number already used", "Order number %s already belongs to a different order."),
    ACCOUNT_EXISTS(409, Kind.REFUSED, "Account exists", "User %s already has an account in another currency."),
    CURRENCY_MISMATCH(409, Kind.RECORDED, "Currency mismatch", "The request is in %s but the account holds %s."),
    REFUND_EXCEEDS_PAYMENT(409, Kind.RECORDED, "Refund exceeds payment", "Refunding %d would take the refunds of order %d beyond its payment of %d; %d remains refundable."),
    ALREADY_APPLIED(409, Kind.RECORDED, "Already applied", "The %s with reference %s was applied to this account before."),
    CHARGE_NOT_RECORDED(409, Kind.RECORDED, "Charge not recorded", "Order %d was paid by a card charge whose id payonce could not "
            + "keep exactly: find that charge at the processor by the reference order-%d "
            + "and refund it there."),
    REFUND_NO_CONFLICT(409, Kind.RECORDED, "Refund number already used", "Refund %s of this order was made for a different amount."),
    ALREADY_SETTLED(409, Kind.REFUSED, "Already settled", "%s is already settled: %s."),
    NOT_OVERDUE(409, Kind.REFUSED, "Not overdue", "%s is %s, and payonce may still learn its outcome itself: an operator settles only an "
            + "outcome the processor still cannot give %s after the first send."),
    WORKER_HOLDS_LEASE(409, Kind.NOT_NOW, "A worker holds the lease", "A worker is asking the processor about %s right now; retry shortly with the same key."),
    REFUND_NOT_REVERSIBLE(409, Kind.REFUSED, "Refund not reversible", "%s is %s: only a refund to the card that succeeded, under an id "
            + "payonce kept, is reversed, once the processor says it failed."),
    PROCESSOR_DISAGREES(409, Kind.REFUSED, "Processor disagrees", "The processor does not confirm this settlement: %s."),
    CHARGE_ALREADY_RECORDED(409, Kind.REFUSED, "Charge already recorded", "The processor's charge %s already settles another payment: "
            + "one charge pays for one payment."),
    REFUND_ALREADY_RECORDED(409, Kind.REFUSED, "Refund already recorded", "The processor's refund %s already settles another refund: "
            + "one refund at the processor is one refund in payonce."),
    PAYLOAD_TOO_LARGE(413, Kind.REFUSED, "Payload too large", "The request body exceeds the size this service accepts."),
    HEADERS_TOO_LARGE(431, Kind.REFUSED, "Request headers too large", "The request's headers exceed the size this service accepts."),
    UNSUPPORTED_MEDIA_TYPE(415, Kind.REFUSED, "Unsupported media type", "Send the body as application/json."),
    IDEMPOTENCY_KEY_REUSED(422, Kind.REFUSED, "Idempotency-Key reused", "This key was first used for a different request; these fields differ: %s."),
    DEPENDENCY_UNAVAILABLE(503, Kind.NOT_NOW, "Dependency unavailable", "A store this service needs is unreachable; retry later."),
    PROCESSOR_UNAVAILABLE(503, Kind.NOT_NOW, "Processor unavailable", "The card processor gave no clear answer (%s); retry later with the same key."),
    INTERNAL_ERROR(500, Kind.FAILED, "Internal error", "The request failed unexpectedly; it is safe to retry with the same key.");

    /** Where the pages of the problem types are served. */
    public static final String TYPE_PATH = "/problems";

    /** The longest title, the bound the API document gives a problem's title. */
    public static final int LONGEST_TITLE = 64;

    /** What an error says about the request that met it, and so what its sender should do next. */
    public enum Kind {
        /** The request itself is wrong (400): nothing was done or stored; corrected, it may be sent again under its key. */
        INVALID,
        /**
         * Refused and not stored, the key still free: the caller, the key or the request must change
         * (not allowed, not found at this path, a key bound to another request, a token already used).
         */
        REFUSED,
        /**
         * A deterministic business outcome once the key is claimed: stored under the key and replayed
         * to every repeat, like a success.
         */
        RECORDED,
        /**
         * Not now: a twin of the request is in flight, or a store is down, for moments. Answered with
         * Retry-After; a command waits for it on the queue.
         */
        NOT_NOW,
        /**
         * Retry later: the order waits for a card processor's outcome, which may take until the
         * recovery job learns it. Answered with Retry-After and not stored; a command is answered
         * rather than held on the queue that long, or, with no reply-to to hear the answer, requeued
         * once and then dead-lettered.
         */
        RETRY_LATER,
        /** The service failed unexpectedly: sending the same request again, under the same key, is safe. */
        FAILED;

        /** Whether the same request under the same key may succeed later: its answer carries Retry-After. */
        public boolean retryAfter() {
            return this == NOT_NOW || this == RETRY_LATER;
        }
    }

    private final int status;
    private final Kind kind;
    private final String title;
    private final String detailFormat;

    ErrorCode(int status, Kind kind, String title, String detailFormat) {
        this.status = status;
        this.kind = kind;
        this.title = title;
        this.detailFormat = detailFormat;
    }

    public int status() {
        return status;
    }

    public Kind kind() {
        return kind;
    }

    public String title() {
        return title;
    }

    public String detail(Object... args) {
        return String.format(Locale.ROOT, detailFormat, args);
    }

    /**
     * The path of this code's page on the service itself (served by {@code api.ProblemTypes}); a problem names it as
     * an absolute URI under the address clients reach payonce at ({@code api.ProblemTypeUris}). Stable for
     * as long as the code is.
     */
    public String type() {
        return TYPE_PATH + "/" + name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** What the code means: its title and detail, with the request's own values left out. */
    public String meaning() {
        return detailFormat.replaceAll("%[sd]", "…");
    }

    /** What a client should do on receiving this code. */
    public String advice() {
        return switch (kind) {
            case NOT_NOW, RETRY_LATER -> "Wait the seconds the Retry-After header gives, then send the same request again.";
            case RECORDED -> "Nothing was done, and the answer is final for this key. Change what caused it (fund the account, use another card, "
                    + "pick another number, wait for the order's state to allow it), then send the request with a new key.";
            case FAILED -> "Send the same request again; the key makes sure it takes effect at most once.";
            case REFUSED -> refusalAdvice();
            case INVALID -> "Nothing was done. Correct the request and send it again.";
        };
    }

    private String refusalAdvice() {
        if (this == IDEMPOTENCY_KEY_REUSED) {
            return "The key already belongs to a different request: send this request with a new key.";
        }
        if (status == 401 || status == 403) {
            return "Nothing was done. Send the request with a valid bearer token from the gateway, for a caller allowed to do this.";
        }
        return "Nothing was done. Correct the request and send it again.";
    }

    /** Whether repeating the request under the same Idempotency-Key helps, and what it gets. */
    public String sameKey() {
        return switch (kind) {
            case NOT_NOW, RETRY_LATER, FAILED -> "Yes: reuse the key. If the first request completes meanwhile, the retry gets its answer back.";
            case RECORDED -> "It gets this same answer again, replayed (Idempotent-Replayed: true): the outcome is stored under the key.";
            case REFUSED, INVALID -> this == IDEMPOTENCY_KEY_REUSED
                    ? "No: the key stays bound to the first request it came with."
                    : "Yes, once the request is corrected: this answer was not stored, so the key is still free.";
        };
    }
}
