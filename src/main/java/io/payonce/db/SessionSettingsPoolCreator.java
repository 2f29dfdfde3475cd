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
import java.util.Optional;
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

    /**
     * How many statements a pipelined connection sends before it waits for a reply: the longest
     * flight of the pay's pipelined body (ROLLBACK and four statements) fits.
     */
    static final int PIPELINING_LIMIT = 8;

    /**
     * How long a pay waits for a pipelined connection before it goes on one statement at a time: it
     * holds the order's pay lock meanwhile, and the shared pool's connections serve it just as well.
     */
    private static final int ACQUISITION_SECONDS = 1;

    private final PayonceConfig config;
    private volatile Pool pipelined;

    public SessionSettingsPoolCreator(PayonceConfig config) {
        this.config = config;
    }

    /**
     * The shared pool, and beside it, from the same servers and options, the pool of
     * {@link PipelinedTransactions} unless {@code payonce.database.pipelined-pay} is off: pipelining,
     * {@code autocommit = 0} and no lock wait exist only together, on connections no other code
     * borrows. The pipelined pool takes no part in Vert.x's pool sharing, whatever
     * {@code quarkus.datasource.reactive.shared} says: under the same name it would be the shared
     * pool's connections, at autocommit=1, where a rolled-back body commits in parts. The shared
     * pool's pipelining limit is 1 whatever
     * {@code quarkus.datasource.reactive.mysql.pipelining-limit} says, so that a transaction begun
     * with BEGIN ({@code withTransaction}) never has a statement sent behind one the server may
     * abort; and no code that expects autocommit ever gets a connection where it is off (the pool
     * resets nothing when a connection comes back).
     */
    @Override
    public Pool create(Input input) {
        List<MySQLConnectOptions> servers = input.mySQLConnectOptionsList();
        servers.forEach(server -> server.setIdleTimeout(clientBoundSeconds()).setIdleTimeoutUnit(TimeUnit.SECONDS).setPipeliningLimit(1));
        if (config.database().pipelinedPay()) {
            PoolOptions ownPool = new PoolOptions(input.poolOptions()).setShared(false)
                    .setConnectionTimeout(ACQUISITION_SECONDS).setConnectionTimeoutUnit(TimeUnit.SECONDS);
            pipelined = pool(input.vertx(), servers.stream().map(server -> new MySQLConnectOptions(server).setPipeliningLimit(PIPELINING_LIMIT)).toList(),
                    ownPool, SessionSettings.forPipelining(config.database()));
        }
        return pool(input.vertx(), servers, input.poolOptions(), SessionSettings.of(config.database()));
    }

    /**
     * The pipelined pool, built by {@link #create} with {@code shared}: asking the shared pool for its
     * delegate makes Quarkus build it, if nothing has yet. Empty when pipelined pays are off.
     */
    Optional<io.vertx.mutiny.sqlclient.Pool> pipelinedBeside(io.vertx.mutiny.sqlclient.Pool shared) {
        shared.getDelegate();
        return Optional.ofNullable(pipelined).map(io.vertx.mutiny.sqlclient.Pool::newInstance);
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
