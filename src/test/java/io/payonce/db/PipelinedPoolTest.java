package io.payonce.db;

import io.payonce.config.PayonceConfig;
import io.payonce.support.Await;
import io.payonce.support.Buyer;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.RowHolder;
import io.payonce.support.Database;
import io.payonce.support.Meters;
import io.quarkus.reactive.mysql.client.MySQLPoolCreator;
import io.quarkus.test.junit.QuarkusTest;
import io.restassured.response.Response;
import io.smallrye.mutiny.Uni;
import io.vertx.mutiny.sqlclient.Pool;
import io.vertx.core.Vertx;
import io.vertx.mutiny.sqlclient.Row;
import io.vertx.mysqlclient.MySQLConnectOptions;
import io.vertx.sqlclient.PoolOptions;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * What a connection carries when its pool hands it out, after pays whose pipelined body was rolled
 * back (too little money, a busy row): the pipelined pool's are at autocommit=0 with no transaction
 * open and no lock wait, and the shared pool's, which BEGIN-based code uses, at autocommit=1 with
 * none open and the configured lock wait.
 */
@QuarkusTest
class PipelinedPoolTest {

    private static final int CONNECTIONS = 4;

    @Inject
    Pool shared;

    @Inject
    SessionSettingsPoolCreator pools;

    @Inject
    PayonceConfig config;

    @Inject
    Meters meters;

    @Inject
    Vertx vertx;

    @ConfigProperty(name = "quarkus.datasource.reactive.url")
    String reactiveUrl;

    @ConfigProperty(name = "quarkus.datasource.username")
    String user;

    @ConfigProperty(name = "quarkus.datasource.password")
    Optional<String> password;

    @Test
    void connectionsComeOutOfEitherPoolWithNoTransactionOpenAndTheirOwnAutocommit() throws Exception {
        Checkout refused = Buyer.withBalance(100).checkout(1500);
        Checkout waited = Buyer.withBalance(5000).checkout(1500);
        assertEquals(402, refused.pay().statusCode());
        double failedBefore = meters.count(PipelinedMeter.NAME, "outcome", "failed");
        CompletableFuture<Void> release = new CompletableFuture<>();
        CompletableFuture<Void> held = RowHolder.holdAccountRowUntil(Database.forTests(), waited.userId(), release);
        CompletableFuture<Response> pay = CompletableFuture.supplyAsync(waited::pay, Executors.newSingleThreadExecutor());
        Await.until(() -> meters.count(PipelinedMeter.NAME, "outcome", "failed"), failed -> failed > failedBefore, Duration.ofSeconds(10),
                "the pipelined body failing at the held row");
        release.complete(null);
        held.get(10, TimeUnit.SECONDS);
        assertEquals(201, pay.get(30, TimeUnit.SECONDS).statusCode());

        assertEquals(List.of("0 0 0"), sessions(pools.pipelinedBeside(shared).orElseThrow()));
        assertEquals(List.of("1 0 1"), sessions(shared));
    }

    /**
     * With Vert.x's pool sharing asked for, and pipelining on the shared pool's connections, the two
     * pools still hand out their own connections: the pipelined pool never shares, and the shared
     * pool's pipelining limit is brought back to 1.
     */
    @Test
    void thePoolsStayApartWhateverThePoolOptionsSay() {
        MySQLConnectOptions server = MySQLConnectOptions.fromUri(reactiveUrl).setUser(user).setPassword(password.orElse("")).setPipeliningLimit(16);
        PoolOptions sharing = new PoolOptions().setShared(true).setName("payonce-pools-apart").setMaxSize(CONNECTIONS);
        SessionSettingsPoolCreator creator = new SessionSettingsPoolCreator(config);
        Pool sharedPool = Pool.newInstance(creator.create(input(sharing, server)));
        try {
            assertEquals(1, server.getPipeliningLimit());
            Pool pipelinedPool = creator.pipelinedBeside(sharedPool).orElseThrow();
            assertEquals(List.of("0 0 0"), sessions(pipelinedPool));
            assertEquals(List.of("1 0 1"), sessions(sharedPool));
            pipelinedPool.closeAndAwait();
        } finally {
            sharedPool.closeAndAwait();
        }
    }

    private MySQLPoolCreator.Input input(PoolOptions options, MySQLConnectOptions server) {
        return new MySQLPoolCreator.Input() {
            @Override
            public Vertx vertx() {
                return vertx;
            }

            @Override
            public PoolOptions poolOptions() {
                return options;
            }

            @Override
            public List<MySQLConnectOptions> mySQLConnectOptionsList() {
                return List.of(server);
            }
        };
    }

    /** autocommit, in_transaction and the lock wait of as many connections at once as the test borrows, distinct values only. */
    private static List<String> sessions(Pool pool) {
        List<Uni<String>> borrowed = IntStream.range(0, CONNECTIONS)
                .mapToObj(i -> pool.withConnection(connection -> connection.query("SELECT @@autocommit AS a, @@in_transaction AS t, @@innodb_lock_wait_timeout AS w").execute()
                        .map(rows -> {
                            Row row = rows.iterator().next();
                            return row.getInteger("a") + " " + row.getInteger("t") + " " + row.getInteger("w");
                        })
                        .call(() -> Uni.createFrom().voidItem().onItem().delayIt().by(Duration.ofMillis(100)))))
                .toList();
        return Uni.join().all(borrowed).andFailFast().await().atMost(Duration.ofSeconds(10)).stream().distinct().toList();
    }
}
