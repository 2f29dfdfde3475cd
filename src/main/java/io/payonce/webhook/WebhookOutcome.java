package io.payonce.webhook;

import java.util.Locale;

/** What payonce made of a webhook event, as its inbox row keeps it, and the tag it is counted under. */
enum WebhookOutcome {
    /** Only inside the transaction that records the event, before its effect is known. */
    RECEIVED,
    /** It settled the payment or the refund it names. */
    APPLIED,
    /** The payment or the refund had that outcome already. */
    ALREADY_SETTLED,
    /** It says otherwise than payonce recorded, or names another amount, currency, order or charge: kept for ops. */
    CONTRADICTING,
    /** No payment was made under the key its charge names: nothing is created. */
    UNKNOWN_CHARGE,
    /** No refund to the card was made under the key its refund names: nothing is created. */
    UNKNOWN_REFUND,
    /** Not a type payonce acts on. */
    IGNORED_TYPE,
    /** A charge.refunded event: kept, not applied, since it names the charge, not the refund; each refund has its own events. */
    NOT_APPLIED;

    /** The metric tag: {@code outcome="unknown_charge"}. */
    String tag() {
        return name().toLowerCase(Locale.ROOT);
    }
}
