package io.payonce.db;

import io.vertx.core.Vertx;
import io.vertx.mysqlclient.MySQLConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The pool fails closed: a connection whose session settings failed never runs a statement for payonce. */
class SessionSettingsTest {

    private static final String GOOD = "SET SESSION innodb_lock_wait_timeout = 7";
    private static final String FAILING = "SET SESSION no_such_setting_in_any_server = 1";

    private Vertx vertx;

    @BeforeEach
    void startVertx() {
        vertx = Vertx.vertx();
    }

    @AfterEach
    void stopVertx() throws Exception {
        vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
    }

    @Test
    void aConnectionWhoseSettingsAppliedServesWithThem() throws Exception {
        Pool pool = pool(List.of(GOOD));

        Row row = await(pool.query("SELECT @@SESSION.innodb_lock_wait_timeout").execute()
                .toCompletionStage().toCompletableFuture()).iterator().next();

        assertEquals(7, row.getInteger(0));
        await(pool.close().toCompletionStage().toCompletableFuture());
    }

    @Test
    void aConnectionWhoseSettingsFailedIsNeverUsed() throws Exception {
        Pool pool = pool(List.of(GOOD, FAILING));

        for (int attempt = 0; attempt < 3; attempt++) {
            CompletableFuture<?> query = pool.query("SELECT @@SESSION.innodb_lock_wait_timeout").execute()
                    .toCompletionStage().toCompletableFuture();
            ExecutionException refused = assertThrows(ExecutionException.class, () -> query.get(15, TimeUnit.SECONDS),
                    "a statement ran on a connection without its session settings");
            assertTrue(DependencyFailure.isTransient(refused.getCause()),
                    "the refusal is a dependency failure (503, retried), never a 500: " + refused.getCause());
        }
        await(pool.close().toCompletionStage().toCompletableFuture());
    }

    private Pool pool(List<String> statements) {
        MySQLConnectOptions server = new MySQLConnectOptions()
                .setHost(System.getenv().getOrDefault("PAYONCE_DB_HOST", "127.0.0.1"))
                .setPort(Integer.parseInt(System.getenv().getOrDefault("PAYONCE_DB_PORT", "3306")))
                .setUser(System.getenv().getOrDefault("PAYONCE_DB_USER", "root"))
                .setPassword(System.getenv().getOrDefault("PAYONCE_DB_PASSWORD", ""));
        PoolOptions options = new PoolOptions().setMaxSize(2).setConnectionTimeout(3).setConnectionTimeoutUnit(TimeUnit.SECONDS);
        return SessionSettingsPoolCreator.pool(vertx, List.of(server), options, new SessionSettings(statements, statements));
    }

    private static <T> T await(CompletableFuture<T> future) throws Exception {
        return future.get(15, TimeUnit.SECONDS);
    }
}
