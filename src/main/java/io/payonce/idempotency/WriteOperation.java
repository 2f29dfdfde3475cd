package io.payonce.idempotency;

import java.util.Locale;

/**
 * Every write payonce answers: its name in idempotency records, metrics and log lines, and the
 * target a request names, which is part of what a key is bound to.
 */
public enum WriteOperation {
    CREATE_ORDER("create-order", "orders"),
    PAY("pay", "order:%s"),
    REFUND("refund", "order:%s"),
    SETTLE_PAYMENT("settle-payment", "payment:%s"),
    SETTLE_REFUND("settle-refund", "refund:%s"),
    REVERSE_REFUND("reverse-refund", "refund:%s"),
    SHIP("ship", "order:%s"),
    COMPLETE("complete", "order:%s"),
    CANCEL("cancel", "order:%s"),
    DEPOSIT("deposit", "account:%s"),
    OPEN_ACCOUNT("open-account", "account:%s"),
    GRANT_COUPON("grant-coupon", "activity:%s");

    private final String tag;
    private final String targetFormat;

    WriteOperation(String tag, String targetFormat) {
        this.tag = tag;
        this.targetFormat = targetFormat;
    }

    /** The name stored with a key and shown in metrics. */
    public String tag() {
        return tag;
    }

    /** The resource a request acts on, as stored with its key: {@code order:42}, {@code account:u-1}, {@code orders}. */
    public String target(Object id) {
        return String.format(Locale.ROOT, targetFormat, id);
    }
}
