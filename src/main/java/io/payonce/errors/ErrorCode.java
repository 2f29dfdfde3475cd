package io.payonce.errors;


import java.util.Locale;

/**
 * Every error a client can receive, with its HTTP status and the words it is told. The code is the
 * stable part of the contract; titles and details may be reworded.
 */
public enum ErrorCode {
    VALIDATION_FAILED(400, "Request validation failed", "One or more fields are invalid; see errors."),
    MALFORMED_REQUEST(400, "Malformed request body", "The body is not valid JSON for this endpoint: %s"),
    IDEMPOTENCY_KEY_MISSING(400, "Idempotency-Key header missing", "This operation needs an Idempotency-Key header; reuse it on every retry."),
    IDEMPOTENCY_KEY_INVALID(400, "Idempotency-Key header invalid", "An Idempotency-Key is 1 to 64 visible ASCII characters, bare or in double quotes."),
    SUBMIT_TOKEN_MISSING(400, "Submit-Token header missing", "Send the token from GET /orders/token as Submit-Token, or an Idempotency-Key."),
    SUBMIT_TOKEN_MALFORMED(400, "Submit-Token header malformed", "A submit token is 1 to 64 characters of A-Z, a-z, 0-9, '-' and '_'."),
    INSUFFICIENT_FUNDS(402, "Insufficient funds", "The balance does not cover %d %s."),
    CARD_DECLINED(402, "Card declined", "The card was declined (%s); nothing was charged."),
    UNAUTHENTICATED(401, "Authentication required", "Send a valid bearer token in the Authorization header."),
    FORBIDDEN(403, "Forbidden", "Your role does not allow this operation."),
    NOT_FOUND(404, "Not found", "No resource exists at this path."),
    ORDER_NOT_FOUND(404, "Order not found", "Order %s does not exist."),
    ACCOUNT_NOT_FOUND(404, "Account not found", "No account exists for user %s."),
    PAYMENT_NOT_FOUND(404, "Payment not found", "Payment %s does not exist."),
    METHOD_NOT_ALLOWED(405, "Method not allowed", "This path does not accept that method."),
    NOT_ACCEPTABLE(406, "Not acceptable", "This endpoint answers with application/json or application/problem+json."),
    IDEMPOTENCY_KEY_IN_USE(409, "Idempotency-Key in use", "A request with this key is still being processed; retry shortly with the same key."),
    PAYMENT_IN_PROGRESS(409, "Payment in progress", "Another payment of this order is in progress; retry shortly with the same key."),
    CARD_PAYMENT_PENDING(409, "Card payment pending", "A card payment of this order is waiting for the processor's outcome; retry later with the same key."),
    ILLEGAL_TRANSITION(409, "Illegal transition", "The order is %s and cannot become %s."),
    SUBMIT_TOKEN_INVALID(409, "Submit token invalid", "This form was already submitted or has expired: reload the form."),
    SUBMIT_TOKEN_IN_USE(409, "Submit token in use", "An order for this submit token is still being created; retry shortly."),
    ORDER_SN_CONFLICT(409, "Order number already used", "Order number %s already belongs to a different order."),
    ACCOUNT_EXISTS(409, "Account exists", "User %s already has an account in another currency."),
    CURRENCY_MISMATCH(409, "Currency mismatch", "The request is in %s but the account holds %s."),
    REFUND_EXCEEDS_PAYMENT(409, "Refund exceeds payment", "Refunding %d would take the refunds of order %d beyond its payment of %d; %d remains refundable."),
    ALREADY_APPLIED(409, "Already applied", "The %s with reference %s was applied to this account before."),
    REFUND_NO_CONFLICT(409, "Refund number already used", "Refund %s of this order was made for a different amount."),
    PAYLOAD_TOO_LARGE(413, "Payload too large", "The request body exceeds the size this service accepts."),
    HEADERS_TOO_LARGE(431, "Request headers too large", "The request's headers exceed the size this service accepts."),
    UNSUPPORTED_MEDIA_TYPE(415, "Unsupported media type", "Send the body as application/json."),
    IDEMPOTENCY_KEY_REUSED(422, "Idempotency-Key reused", "This key was first used for a different request; these fields differ: %s."),
    DEPENDENCY_UNAVAILABLE(503, "Dependency unavailable", "A store this service needs is unreachable; retry later."),
    INTERNAL_ERROR(500, "Internal error", "The request failed unexpectedly; it is safe to retry with the same key.");

    /** Where the pages of the problem types are served. */
    public static final String TYPE_PATH = "/problems";

    /** The longest title, the bound the API document gives a problem's title. */
    public static final int LONGEST_TITLE = 64;

    private final int status;
    private final String title;
    private final String detailFormat;

    ErrorCode(int status, String title, String detailFormat) {
        this.status = status;
        this.title = title;
        this.detailFormat = detailFormat;
    }

    public int status() {
        return status;
    }

    public String title() {
        return title;
    }

    public String detail(Object... args) {
        return String.format(Locale.ROOT, detailFormat, args);
    }

    /** Whether the same request may succeed shortly; such answers carry Retry-After. */
    public boolean retryLater() {
        return switch (this) {
            case SUBMIT_TOKEN_IN_USE, IDEMPOTENCY_KEY_IN_USE, PAYMENT_IN_PROGRESS, CARD_PAYMENT_PENDING, DEPENDENCY_UNAVAILABLE -> true;
            default -> false;
        };
    }

    /**
     * Whether this answer is a deterministic business outcome, stored under the request's
     * Idempotency-Key and replayed; other failures leave the key unclaimed so that a retry runs afresh.
     */
    public boolean recorded() {
        return switch (this) {
            case INSUFFICIENT_FUNDS, CARD_DECLINED, ORDER_NOT_FOUND, ACCOUNT_NOT_FOUND, ILLEGAL_TRANSITION, ORDER_SN_CONFLICT,
                 CURRENCY_MISMATCH, REFUND_EXCEEDS_PAYMENT, REFUND_NO_CONFLICT, ALREADY_APPLIED -> true;
            default -> false;
        };
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
        if (retryLater()) {
            return "Wait the seconds the Retry-After header gives, then send the same request again.";
        }
        if (this == IDEMPOTENCY_KEY_REUSED) {
            return "The key already belongs to a different request: send this request with a new key.";
        }
        if (status == 401 || status == 403) {
            return "Nothing was done. Send the request with a valid bearer token from the gateway, for a caller allowed to do this.";
        }
        if (recorded()) {
            return "Nothing was done, and the answer is final for this key. Change what caused it (fund the account, use another card, "
                    + "pick another number, wait for the order's state to allow it), then send the request with a new key.";
        }
        if (status >= 500) {
            return "Send the same request again; the key makes sure it takes effect at most once.";
        }
        return "Nothing was done. Correct the request and send it again.";
    }

    /** Whether repeating the request under the same Idempotency-Key helps, and what it gets. */
    public String sameKey() {
        if (retryLater() || status >= 500) {
            return "Yes: reuse the key. If the first request completes meanwhile, the retry gets its answer back.";
        }
        if (recorded()) {
            return "It gets this same answer again, replayed (Idempotent-Replayed: true): the outcome is stored under the key.";
        }
        if (this == IDEMPOTENCY_KEY_REUSED) {
            return "No: the key stays bound to the first request it came with.";
        }
        return "Yes, once the request is corrected: this answer was not stored, so the key is still free.";
    }
}
