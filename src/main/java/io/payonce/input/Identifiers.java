package io.payonce.input;

/**
 * The shapes of identifiers that callers choose: ASCII, bounded, safe in keys, logs and URLs.
 * Anchored, because the API document hands each pattern on as it is, and OpenAPI patterns are
 * ECMA-262 expressions that a generated client searches for anywhere in a value: unanchored, a
 * 500-character user id would pass the client's check and be refused here.
 */
public final class Identifiers {

    /** A user id as carried in the JWT {@code sub}: the gateway's user identifier. */
    public static final String USER_ID = "^[A-Za-z0-9._@:-]{1,64}$";

    /** A caller's business number for an order, a refund or an activity. */
    public static final String BUSINESS_NUMBER = "^[A-Za-z0-9._:-]{1,64}$";

    /**
     * A card as the processor's client-side tokenization names it: payonce never sees a card
     * number, only this token, which it passes on to the processor.
     */
    public static final String CARD_TOKEN = "^[A-Za-z0-9_-]{1,64}$";

    /**
     * A processor's object as an operator names it (the object a settlement says was made, a refund
     * a settlement acknowledges or a reversal names): letters, digits, '.', '_', ':' and '-', up to
     * 1000 characters, as the processor wrote it, so that an operation made under an id longer than
     * the 255 payonce keeps still has its way out; never "." or "..", so that it can never leave its
     * place in the processor's URL path.
     */
    public static final String NAMED_PROCESSOR_ID = "^(?!\\.{1,2}$)[A-Za-z0-9._:-]{1,1000}$";

    /** Why an operator did what they did: printable ASCII, at the length the audit row stores. */
    public static final String OPERATOR_REASON = "^[\\x20-\\x7E]{1,500}$";

    /** A one-time submit token as GET /orders/token issues it. */
    public static final String SUBMIT_TOKEN = "^[A-Za-z0-9_-]{1,64}$";

    /**
     * The longest Idempotency-Key, quotes aside: checked by io.payonce.idempotency.IdempotencyKey and
     * stated in the API document by io.payonce.api.StringBounds, which must not import each other.
     */
    public static final int IDEMPOTENCY_KEY_MAX_LENGTH = 64;

    /** An ISO 4217 currency code. */
    public static final String CURRENCY = "^[A-Z]{3}$";

    /** A positive whole number as a query parameter carries it, at most 19 digits (a 64-bit id). */
    public static final String ID_TEXT = "^[0-9]{1,19}$";

    /** A page size as a query parameter carries it. */
    public static final String PAGE_SIZE_TEXT = "^[0-9]{1,3}$";

    private Identifiers() {
    }
}
