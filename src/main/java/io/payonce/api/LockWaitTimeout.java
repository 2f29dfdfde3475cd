package io.payonce.api;

import io.vertx.mysqlclient.MySQLException;

/** Recognises MySQL's "lock wait timeout exceeded" (1205): a row stayed locked by another transaction. */
public final class LockWaitTimeout {

    private static final int ER_LOCK_WAIT_TIMEOUT = 1205;

    private LockWaitTimeout() {
    }

    public static boolean is(Throwable failure) {
        return failure instanceof MySQLException mysql && mysql.getErrorCode() == ER_LOCK_WAIT_TIMEOUT;
    }
}
