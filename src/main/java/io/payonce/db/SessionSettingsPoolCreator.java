package io.payonce.db;

import io.payonce.config.PayonceConfig;
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
 */
@Singleton
public class SessionSettingsPoolCreator implements MySQLPoolCreator {

    private static final Logger LOG = Logger.getLogger(SessionSettingsPoolCreator.class);

    private final PayonceConfig config;

    public SessionSettingsPoolCreator(PayonceConfig config) {
        this.config = config;
    }

    @Override
    public Pool create(Input input) {
        String settings = "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED, SESSION innodb_lock_wait_timeout = "
                + config.database().lockWaitTimeoutSeconds();
        List<SqlConnectOptions> servers = List.copyOf(input.mySQLConnectOptionsList());
        return MySQLBuilder.pool()
                .with(input.poolOptions())
                .connectingTo(servers)
                .using(input.vertx())
                // The pool hands the connection out only after close() returns it from this handler.
                .withConnectHandler(connection -> connection.query(settings).execute().onComplete(applied -> {
                    if (applied.failed()) {
                        LOG.warnf("Session settings not applied to a new connection: %s", applied.cause().toString());
                    }
                    connection.close();
                }))
                .build();
    }
}
