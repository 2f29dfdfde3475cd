package io.payonce.metrics;

import java.util.Locale;

/** What became of one write request. */
public enum Outcome {
    /** It ran; under a key, its answer was stored. */
    EXECUTED,
    /** An earlier request's stored answer was returned. */
    REPLAYED,
    /** A twin with the same key was still in flight. */
    CONFLICT,
    /** The key had been used for a different request. */
    MISMATCH,
    /** The request was invalid and nothing was claimed. */
    REJECTED;

    public String tag() {
        return name().toLowerCase(Locale.ROOT);
    }
}
