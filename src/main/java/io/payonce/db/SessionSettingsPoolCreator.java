package io.payonce.db;

import io.payonce.config.PayonceConfig;
import io.quarkus.arc.Unremovable;
import io.quarkus.reactive.mysql.client.MySQLPoolCreator;
import io.vertx.mysqlclient.MySQLBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnectOptions;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.util.List;

/**
 * Builds the reactive pool so that every connection starts with payonce's session settings:
 * <ul>
 * <li>READ COMMITTED, so that compare-and-set updates lock only the rows they match (no gap
 * locks, fewer deadlocks) and a claim that lost to a twin reads the twin's committed answer;</li>
 * <li>a short lock wait, so that a request queued behind a stuck transaction fails fast into a
 * retry or a 409, instead of holding the client for InnoDB's default 50 seconds.</li>
 * </ul>
 * Quarkus looks this bean up by type when it builds the pool, hence {@code @Unremovable}.
 */
@Singleton
@Unremovable
public class SessionSettingsPoolCreator implements MySQLPoolCreator {

    private static final Logger LOG = Logger.getLogger(SessionSettingsPoolCreator.class);
    /** Two statements: MariaDB and MySQL 8 name the isolation variable differently, but both take this form. */
    private static final String READ_COMMITTED = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED";

    private final PayonceConfig config;

    public SessionSettingsPoolCreator(PayonceConfig config) {
        this.config = config;
    }

    @Override
    public Pool create(Input input) {
        String lockWait = "SET SESSION innodb_lock_wait_timeout = " + config.database().lockWaitTimeoutSeconds();
        List<SqlConnectOptions> servers = List.copyOf(input.mySQLConnectOptionsList());
        return MySQLBuilder.pool()
                .with(input.poolOptions())
                .connectingTo(servers)
                .using(input.vertx())
                // The pool hands the connection out only after close() returns it from this handler.
                .withConnectHandler(connection -> connection.query(READ_COMMITTED).execute()
                        .compose(isolated -> connection.query(lockWait).execute())
                        .onComplete(applied -> {
                            if (applied.failed()) {
                                LOG.warnf("Session settings not applied to a new connection: %s", applied.cause().toString());
                            }
                            connection.close();
                        }))
                .build();
    }
}
