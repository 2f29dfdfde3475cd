package io.payonce.input;

/** The shapes of identifiers that callers choose: ASCII, bounded, safe in keys, logs and URLs. */
public final class Identifiers {

    /** A user id as carried in the JWT {@code sub}: the gateway's user identifier. */
    public static final String USER_ID = "[A-Za-z0-9._@:-]{1,64}";

    /** A caller's business number for an order, a refund or an activity. */
    public static final String BUSINESS_NUMBER = "[A-Za-z0-9._:-]{1,64}";

    /**
     * A card as the processor's client-side tokenization names it: payonce never sees a card
     * number, only this token, which it passes on to the processor.
     */
    public static final String CARD_TOKEN = "[A-Za-z0-9_-]{1,64}";

    /** An ISO 4217 currency code. */
    public static final String CURRENCY = "[A-Z]{3}";

    private Identifiers() {
    }
}
