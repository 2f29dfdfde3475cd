package io.payonce.metrics;

/**
 * The defences that make a repeated request harmless, from the outermost to the last gate: what a
 * write endpoint declares it relies on ({@code api.RepeatProtection}) and what an answer names as
 * the defence that recognised its request as a repeat, counted under its {@link #tag()} as the
 * {@code layer} of {@code payonce_duplicates_total}. Dashboards and alerts read those tags: they
 * never change.
 */
public enum RepeatDefence {
    /** A one-time submit token, consumed atomically in Redis; a token already used replays its submission's answer. */
    SUBMIT_TOKEN("token"),
    /** The short Redis pay lock: a concurrent twin is turned away early, before it queues on database row locks. */
    PAY_LOCK("lock"),
    /** A caller-chosen key claimed in the transaction of the effect; a repeat replays the stored answer. */
    IDEMPOTENCY_KEY("idempotency_key"),
    /** A command message's id, its key: a redelivery or a copy is answered with the first answer. */
    MESSAGE_ID("message_id"),
    /** A compare-and-set on the current status: only one request moves it; a repeat finds it moved. */
    STATE_CAS("state_cas"),
    /** A unique index refuses a second row. */
    UNIQUE_INDEX("unique_index");

    private final String tag;

    RepeatDefence(String tag) {
        this.tag = tag;
    }

    /** Whether a repeat caught here is answered from the answer stored under a key, rather than by running again. */
    public boolean replaysStoredAnswer() {
        return this == SUBMIT_TOKEN || this == IDEMPOTENCY_KEY || this == MESSAGE_ID;
    }

    /** The metric tag value: {@code layer="token"}, {@code layer="lock"}, ... */
    public String tag() {
        return tag;
    }
}
