package io.payonce.webhook;

import java.util.Locale;

/** What payonce made of a webhook event, as its inbox row keeps it, and the tag it is counted under. */
enum WebhookOutcome {
    /** Only inside the transaction that records the event, before its effect is known. */
    RECEIVED,
    /** It settled the payment it names. */
    APPLIED,
    /** The payment had that outcome already. */
    ALREADY_SETTLED,
    /** It says otherwise than payonce recorded, or names another amount, currency or order: kept for ops. */
    CONTRADICTING,
    /** No payment was made under the key it names: nothing is created. */
    UNKNOWN_CHARGE,
    /** Not a type payonce acts on. */
    IGNORED_TYPE,
    /** A refund event: kept, not applied, while refunds are not settled from events. */
    NOT_APPLIED;

    /** The metric tag: {@code outcome="unknown_charge"}. */
    String tag() {
        return name().toLowerCase(Locale.ROOT);
    }
}
