package io.payonce.metrics;

import java.util.Locale;

/** The defence that recognised a repeated request, from the outermost to the last gate. */
public enum DuplicateLayer {
    /** A one-time submit token had already been used: its submission's answer was replayed. */
    TOKEN,
    /** The Redis pay lock was held by a twin still in flight. */
    LOCK,
    /** The Idempotency-Key had already been claimed: its answer was replayed. */
    IDEMPOTENCY_KEY,
    /** A command message's id (its key) had already been claimed: a redelivery or a copy, answered with the first answer. */
    MESSAGE_ID,
    /** A status compare-and-set found the order already moved. */
    STATE_CAS,
    /** A unique index refused a second row. */
    UNIQUE_INDEX;

    /** Whether a repeat caught here is answered from the answer stored under a key, rather than by running again. */
    public boolean replaysStoredAnswer() {
        return this == TOKEN || this == IDEMPOTENCY_KEY || this == MESSAGE_ID;
    }

    public String tag() {
        return name().toLowerCase(Locale.ROOT);
    }
}
