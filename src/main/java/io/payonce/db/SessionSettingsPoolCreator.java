package io.payonce.db;

import io.payonce.config.PayonceConfig;
import io.quarkus.arc.Unremovable;
import io.quarkus.reactive.mysql.client.MySQLPoolCreator;
import io.vertx.core.Vertx;
import io.vertx.mysqlclient.MySQLBuilder;
import io.vertx.mysqlclient.MySQLConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.SqlConnectOptions;
import io.vertx.sqlclient.SqlConnection;
import jakarta.inject.Singleton;
import org.jboss.logging.Logger;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Builds the reactive pool so that every connection starts with payonce's {@link SessionSettings},
 * and fails closed: a connection on which a setting failed is killed, never handed out. It would
 * otherwise run REPEATABLE READ with the server's lock wait and no time bound, where a losing twin
 * can store a wrong answer for the whole retention. Quarkus looks this bean up by type when it
 * builds the pool, hence {@code @Unremovable}.
 */
@Singleton
@Unremovable
public class SessionSettingsPoolCreator implements MySQLPoolCreator {

    private static final Logger LOG = Logger.getLogger(SessionSettingsPoolCreator.class);

    private final PayonceConfig config;

    public SessionSettingsPoolCreator(PayonceConfig config) {
        this.config = config;
    }

    @Override
    public Pool create(Input input) {
        List<MySQLConnectOptions> servers = input.mySQLConnectOptionsList();
        servers.forEach(server -> server.setIdleTimeout(clientBoundSeconds()).setIdleTimeoutUnit(TimeUnit.SECONDS));
        return pool(input.vertx(), servers, input.poolOptions(), SessionSettings.of(config.database()));
    }

    /**
     * The client's own bound on a silent connection: nothing healthy is silent longer than a
     * statement plus an idle transaction, since the server ends both by then. A server that vanished
     * without closing the connection (a half-open TCP) is dropped after it; {@link Transactions}
     * bounds each attempt by the same time. The pool's idle timeout is shorter, so that it retires
     * idle connections before this fires.
     */
    private int clientBoundSeconds() {
        return config.database().statementTimeoutSeconds() + config.database().idleTransactionTimeoutSeconds();
    }

    /** The pool hands a new connection out only after the connect handler's {@code close()} returns it. */
    static Pool pool(Vertx vertx, List<? extends SqlConnectOptions> servers, PoolOptions options, SessionSettings settings) {
        return MySQLBuilder.pool()
                .with(options)
                .connectingTo(List.copyOf(servers))
                .using(vertx)
                .withConnectHandler(connection -> settings.applyTo(connection).onComplete(applied -> {
                    if (applied.succeeded()) {
                        connection.close();
                    } else {
                        discard(connection, applied.cause());
                    }
                }))
                .build();
    }

    /**
     * The server kills the connection, so the pool sees it closed and drops it; a request waiting
     * for it gets a closed connection, which is a transient failure retried on another one.
     */
    private static void discard(SqlConnection connection, Throwable cause) {
        LOG.errorf("Session settings failed on a new database connection, which is closed unused: %s", cause.toString());
        connection.query("KILL CONNECTION_ID()").execute().onComplete(killed -> connection.close());
    }
}
