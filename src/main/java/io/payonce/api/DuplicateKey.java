package io.payonce.api;

import io.vertx.mysqlclient.MySQLException;

/** Recognises MySQL's "duplicate entry" (1062): a unique key refused a second row. */
public final class DuplicateKey {

    private static final int ER_DUP_ENTRY = 1062;

    private DuplicateKey() {
    }

    public static boolean is(Throwable failure) {
        return failure instanceof MySQLException mysql && mysql.getErrorCode() == ER_DUP_ENTRY;
    }
}
