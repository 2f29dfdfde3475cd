package io.payonce.token;

/** What consuming a submit token found. */
public enum Consumption {
    /** This request consumed the token and must create the order. */
    CONSUMED,
    /** The same caller consumed it earlier: the order exists, is being written, or was never written. */
    CONSUMED_BEFORE,
    /** Unknown, expired or issued to someone else. */
    UNKNOWN
}
