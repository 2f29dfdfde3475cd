package io.payonce.db;

import io.payonce.config.PayonceConfig;
import io.vertx.core.Vertx;
import io.vertx.mysqlclient.MySQLConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.stream.Stream;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The pool fails closed: a connection whose session settings failed never runs a statement for
 * payonce. And payonce's own settings put every session in UTC, whatever the server's zone.
 */
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

    /**
     * A MariaDB built without Galera has no {@code wsrep_} variables: payonce's sync-wait setting is
     * skipped there, not a reason to refuse every connection.
     */
    @Test
    void aGaleraSettingTheServerDoesNotKnowIsSkipped() throws Exception {
        Pool pool = pool(List.of(GOOD, "SET SESSION wsrep_no_such_setting_in_any_server = 1"));

        Row row = await(pool.query("SELECT @@SESSION.innodb_lock_wait_timeout").execute()
                .toCompletionStage().toCompletableFuture()).iterator().next();

        assertEquals(7, row.getInteger(0));
        await(pool.close().toCompletionStage().toCompletableFuture());
    }

    /**
     * A server started with {@code default-time-zone=+05:00} hands out sessions in that zone; the
     * shared server here runs in UTC, so the zone is set first, as such a server would have it.
     */
    @Test
    void theDatabaseClockIsReadAsTheInstantItIsWhateverTheServerZone() throws Exception {
        SessionSettings payonce = SessionSettings.of(new Limits());
        String serverZone = "SET SESSION time_zone = '+05:00'";
        Pool pool = pool(new SessionSettings(first(serverZone, payonce.mariaDb()), first(serverZone, payonce.mySql())));

        Instant before = Instant.now();
        Row row = await(pool.query("SELECT NOW(6) AS now").execute().toCompletionStage().toCompletableFuture()).iterator().next();
        Instant after = Instant.now();

        Instant now = UtcTimes.instant(io.vertx.mutiny.sqlclient.Row.newInstance(row), "now");
        Duration tolerance = Duration.ofSeconds(5);
        assertTrue(!now.isBefore(before.minus(tolerance)) && !now.isAfter(after.plus(tolerance)),
                "the database's clock read as " + now + ", not the moment between " + before + " and " + after);
        await(pool.close().toCompletionStage().toCompletableFuture());
    }

    private static List<String> first(String statement, List<String> then) {
        return Stream.concat(Stream.of(statement), then.stream()).toList();
    }

    private Pool pool(List<String> statements) {
        return pool(new SessionSettings(statements, statements));
    }

    private Pool pool(SessionSettings settings) {
        MySQLConnectOptions server = new MySQLConnectOptions()
                .setHost(System.getenv().getOrDefault("PAYONCE_DB_HOST", "127.0.0.1"))
                .setPort(Integer.parseInt(System.getenv().getOrDefault("PAYONCE_DB_PORT", "3306")))
                .setUser(System.getenv().getOrDefault("PAYONCE_DB_USER", "root"))
                .setPassword(System.getenv().getOrDefault("PAYONCE_DB_PASSWORD", ""));
        PoolOptions options = new PoolOptions().setMaxSize(2).setConnectionTimeout(3).setConnectionTimeoutUnit(TimeUnit.SECONDS);
        return SessionSettingsPoolCreator.pool(vertx, List.of(server), options, settings);
    }

    /** The defaults of {@code payonce.database}. */
    private static final class Limits implements PayonceConfig.Database {
        @Override
        public int lockWaitTimeoutSeconds() {
            return 3;
        }

        @Override
        public int statementTimeoutSeconds() {
            return 5;
        }

        @Override
        public int idleTransactionTimeoutSeconds() {
            return 5;
        }

        @Override
        public boolean timesStoredInUtc() {
            return false;
        }

        @Override
        public boolean durableCommitsRequired() {
            return true;
        }

        @Override
        public boolean pipelinedPay() {
            return true;
        }

        @Override
        public int syncWait() {
            return 1;
        }
    }

    private static <T> T await(CompletableFuture<T> future) throws Exception {
        return future.get(15, TimeUnit.SECONDS);
    }
}
