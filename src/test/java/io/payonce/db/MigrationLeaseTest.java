package io.payonce.db;

import io.payonce.support.Await;
import io.payonce.support.Database;
import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.migration.BaseJavaMigration;
import org.flywaydb.core.api.migration.Context;
import org.flywaydb.core.api.output.MigrateResult;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import javax.sql.DataSource;
import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link MigrationLease} in the JVM, without a cluster: a node is whatever its server says it is, so a
 * connection to this machine's MariaDB, in a database of the test's own, answers the lease's question
 * about the server's settings as a Galera node set up as docs/operations/scaling.md says would; every
 * other statement goes to the server as it is. Flyway migrates that database with the lease among its
 * callbacks, as {@link MigrationLeaseRegistration} adds it, and one Java migration of the test's notes
 * who holds the lease while it runs. GaleraIT shows the lease at work between instances on a real
 * cluster; this shows, in every build, that on a node the lease is taken at all.
 */
class MigrationLeaseTest {

    /** The holder of a lease the test writes itself: another instance that is still migrating, as far as anyone can tell. */
    private static final String ANOTHER_INSTANCE = "an-instance-still-migrating";

    /** How the lease's statement that takes it begins ({@code MigrationLease.TAKE}). */
    private static final String TAKE_THE_LEASE = "INSERT INTO payonce_migration_lease";

    /** A Galera node's answer to {@code GaleraSettingsCheck}'s SHOW GLOBAL VARIABLES, set up as docs/operations/scaling.md says. */
    private static final String A_NODES_SETTINGS = """
            SELECT 'wsrep_on' AS Variable_name, 'ON' AS Value
            UNION ALL SELECT 'binlog_format', 'ROW'
            UNION ALL SELECT 'innodb_autoinc_lock_mode', '2'
            UNION ALL SELECT 'wsrep_OSU_method', 'TOI'
            UNION ALL SELECT 'wsrep_cluster_name', 'payonce_test_cluster'
            UNION ALL SELECT 'wsrep_node_name', 'n1'""";

    private final String name = "payonce_lease_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
    private final Database server = Database.named("");
    private final Database schema = Database.named(name);
    /** How often a connection of the test's node was asked to take the lease. */
    private final AtomicInteger takes = new AtomicInteger();
    /** What the migration found of the lease while it ran. */
    private final AtomicReference<String> holderSeen = new AtomicReference<>();

    @BeforeEach
    void createTheSchema() {
        server.update("CREATE DATABASE `" + name + "`");
    }

    @AfterEach
    void dropIt() {
        server.update("DROP DATABASE IF EXISTS `" + name + "`");
    }

    /**
     * Another instance holds the lease: this one tries to take it, again and again, and neither
     * migrates nor makes any table meanwhile. Once the lease is free it takes it, creates Flyway's
     * history under it as a baseline below every migration, migrates holding it, and gives it back.
     * A lease skipped on a node lets the migration run beside the other instance's.
     */
    @Test
    void onAGaleraNodeAnInstanceMigratesOnlyUnderTheLease() throws Exception {
        schema.update(MigrationLease.CREATE_TABLE);
        schema.update("INSERT INTO payonce_migration_lease VALUES (1, ?, UTC_TIMESTAMP(6) + INTERVAL 5 MINUTE)", ANOTHER_INSTANCE);
        MigrationLease lease = new MigrationLease(() -> asGaleraNode(schema.connect()));

        ExecutorService instance = Executors.newSingleThreadExecutor();
        MigrateResult result;
        try {
            Future<MigrateResult> migrating = instance.submit(() -> flyway(new Node(true), lease).migrate());
            Await.until(() -> takes.get() >= 2 || migrating.isDone(), Duration.ofSeconds(10), "the instance asking for the lease twice");
            assertFalse(migrating.isDone(), () -> "the instance did not wait while another held the lease (it asked for the lease "
                    + takes.get() + " times): " + outcome(migrating));
            assertNull(holderSeen.get(), "nothing migrated meanwhile");
            assertEquals(List.of("payonce_migration_lease"), tables(), "no table made meanwhile, Flyway's history neither");
            schema.update("DELETE FROM payonce_migration_lease WHERE holder = ?", ANOTHER_INSTANCE);
            result = migrating.get(30, TimeUnit.SECONDS);
        } finally {
            // A wait that outlived a failed assertion ends here: interrupted, the lease gives up and gives back.
            instance.shutdownNow();
        }

        assertEquals(1, result.migrationsExecuted);
        String holder = holderSeen.get();
        assertTrue(holder != null && holder.matches("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"),
                "the migration ran while this instance held the lease; it found the lease held by: " + holder);
        assertEquals(List.of("0"), schema.strings("SELECT version FROM flyway_schema_history WHERE type = 'BASELINE'"),
                "Flyway's history created under the lease, as a baseline below every migration");
        assertEquals(0, schema.count("SELECT COUNT(*) FROM payonce_migration_lease"), "the lease given back once migrated");
    }

    /** Off a cluster the lease is no business of payonce's: no connection of its own, no table, Flyway's named lock alone. */
    @Test
    void offAClusterNoLeaseIsTaken() {
        AtomicInteger opened = new AtomicInteger();
        MigrationLease lease = new MigrationLease(() -> {
            opened.incrementAndGet();
            return schema.connect();
        });

        MigrateResult result = flyway(new Node(false), lease).migrate();

        assertEquals(1, result.migrationsExecuted);
        assertEquals("no lease table", holderSeen.get());
        assertEquals(0, opened.get(), "no connection of the lease's own");
        assertEquals(List.of("flyway_schema_history"), tables());
    }

    /**
     * Flyway as payonce's start runs it, on the test's schema alone: the lease among its callbacks, and
     * one Java migration instead of payonce's (a location that holds none, so that none of them is found).
     */
    private Flyway flyway(DataSource node, MigrationLease lease) {
        return Flyway.configure(MigrationLeaseTest.class.getClassLoader())
                .dataSource(node)
                .locations("classpath:io/payonce/db/no_migrations_here")
                .failOnMissingLocations(false)
                .javaMigrations(new V1__Note_the_lease_holder(holderSeen))
                .callbacks(lease)
                .load();
    }

    /** How a migration that is over ended: what it ran, or why it failed. */
    private static String outcome(Future<MigrateResult> migrating) {
        try {
            return "it ran " + migrating.get().migrationsExecuted + " migration(s)";
        } catch (ExecutionException e) {
            return "it failed: " + e.getCause();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "interrupted";
        }
    }

    private List<String> tables() {
        return schema.strings("SELECT table_name FROM information_schema.tables WHERE table_schema = ? ORDER BY table_name", name);
    }

    /**
     * {@code connection}, answering the query for the server's settings as a Galera node would, and counting
     * each statement that takes the lease. Only {@code GaleraSettingsCheck}'s question is answered so:
     * Flyway's own ({@code SELECT @@GLOBAL.WSREP_ON}) meets the server as it is, and Flyway keeps its
     * named lock, so that what holds the instances apart here is payonce's lease alone.
     */
    private Connection asGaleraNode(Connection connection) {
        return (Connection) Proxy.newProxyInstance(MigrationLeaseTest.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    if (method.getName().equals("createStatement") && method.getParameterCount() == 0) {
                        Statement statement = connection.createStatement();
                        return Proxy.newProxyInstance(MigrationLeaseTest.class.getClassLoader(), new Class<?>[] {Statement.class},
                                (statementProxy, statementMethod, statementArgs) -> invoke(statement, statementMethod, asANode(statementArgs)));
                    }
                    if (method.getName().equals("prepareStatement") && args[0] instanceof String sql && sql.strip().startsWith(TAKE_THE_LEASE)) {
                        takes.incrementAndGet();
                    }
                    return invoke(connection, method, method.getName().equals("prepareStatement") ? asANode(args) : args);
                });
    }

    /** The arguments of a call that sends SQL, the query for the server's settings replaced by a node's answer to it. */
    private static Object[] asANode(Object[] args) {
        if (args == null || args.length == 0 || !(args[0] instanceof String sql) || !asksForTheServersSettings(sql)) {
            return args;
        }
        Object[] answered = args.clone();
        answered[0] = A_NODES_SETTINGS;
        return answered;
    }

    private static boolean asksForTheServersSettings(String sql) {
        String asked = sql.strip().toLowerCase(Locale.ROOT);
        return asked.startsWith("show") && asked.contains("variables") && asked.contains("wsrep_on");
    }

    private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }

    /** Flyway's data source: a new connection to the test's schema each time, through a Galera node or straight to the server. */
    private final class Node implements DataSource {

        private final boolean galera;

        Node(boolean galera) {
            this.galera = galera;
        }

        @Override
        public Connection getConnection() throws SQLException {
            return galera ? asGaleraNode(schema.connect()) : schema.connect();
        }

        @Override
        public Connection getConnection(String user, String password) throws SQLException {
            return getConnection();
        }

        @Override
        public PrintWriter getLogWriter() {
            return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {
        }

        @Override
        public void setLoginTimeout(int seconds) {
        }

        @Override
        public int getLoginTimeout() {
            return 0;
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            throw new SQLFeatureNotSupportedException();
        }

        @Override
        public <T> T unwrap(Class<T> type) throws SQLException {
            throw new SQLException("Not a wrapper of " + type);
        }

        @Override
        public boolean isWrapperFor(Class<?> type) {
            return false;
        }
    }

    /** The test's one migration: notes who holds the lease while it runs, read on the connection Flyway migrates with. */
    static final class V1__Note_the_lease_holder extends BaseJavaMigration {

        private final AtomicReference<String> holderSeen;

        V1__Note_the_lease_holder(AtomicReference<String> holderSeen) {
            this.holderSeen = holderSeen;
        }

        @Override
        public void migrate(Context context) throws SQLException {
            try (Statement statement = context.getConnection().createStatement()) {
                try (ResultSet table = statement.executeQuery("SELECT COUNT(*) FROM information_schema.tables "
                        + "WHERE table_schema = DATABASE() AND table_name = 'payonce_migration_lease'")) {
                    table.next();
                    if (table.getLong(1) == 0) {
                        holderSeen.set("no lease table");
                        return;
                    }
                }
                try (ResultSet lease = statement.executeQuery("SELECT holder FROM payonce_migration_lease WHERE id = 1")) {
                    holderSeen.set(lease.next() ? lease.getString(1) : "nobody");
                }
            }
        }
    }
}
