package io.payonce.db;

import org.flywaydb.core.Flyway;
import org.flywaydb.core.api.callback.Callback;
import org.flywaydb.core.api.callback.Context;
import org.flywaydb.core.api.callback.Event;
import org.flywaydb.core.api.configuration.Configuration;
import org.jboss.logging.Logger;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;

/**
 * Lets one instance at a time migrate a Galera cluster. On one server Flyway serialises instances
 * that start together with a named lock (GET_LOCK), held by its session across every migration. A
 * Galera node refuses GET_LOCK, so Flyway falls back to locking its history table with SELECT … FOR
 * UPDATE in each migration's transaction, and a migration's DDL commits that transaction at once:
 * the next instance then takes the lock while the first is still migrating, finds the same version
 * pending and runs it again (seen in GaleraIT: two instances through one node, one failing on a
 * duplicate history row after running the migration a second time).
 *
 * <p>So on a cluster, and only there, an instance first refuses a node configured against Galera's
 * needs ({@link GaleraSettingsCheck}), before Flyway validates, then takes a lease: one row in a
 * table of its own, inserted with autocommit on a connection it keeps until it is done. Two instances
 * inserting it at once on one node meet on its primary key (1062); on two nodes, in certification
 * (1213, the later COMMIT fails). The holder renews the lease before and after each migration and
 * stops, failing its start, if it finds the lease no longer its own; it deletes the lease when done.
 * A lease left to expire by an instance that died while migrating is taken over by the next one, which
 * then finds whatever the crash left, as Flyway would on one server. Expiry is judged by the writer's
 * clock, the only one that matters while every instance reaches one writer. A start that fails while
 * it holds the lease gives it back as the application shuts down ({@link MigrationLeaseRegistration}).
 *
 * <p>The lease is taken before Flyway validates, and Flyway's history table is created under it. Flyway
 * creates that table when it finds none, after validating and before any callback of its migrate, and
 * a DDL statement on a cluster aborts every transaction that holds the table it names: two instances
 * starting together on an empty schema both created it, and the later CREATE aborted the other's
 * transaction on it with 1213, failing that start before any migration ran (one start of 24 through
 * the proxy); landing later, it could abort a migration's history row after its DDL. Under the lease the holder
 * has Flyway create the table as a baseline at version 0, below every migration, so that each of
 * them still runs; Flyway would otherwise refuse the schema, which the lease's own table has made
 * non-empty. Every later instance finds the table there and never names it in DDL.
 *
 * <p>On a server that is not in a cluster it does nothing and touches no connection but Flyway's.
 */
final class MigrationLease implements Callback {

    private static final Logger LOG = Logger.getLogger(MigrationLease.class);

    /**
     * Longer than any one of payonce's migrations takes: the lease is renewed only between them. An
     * instance that died while migrating holds back the others' start this long.
     */
    static final Duration TERM = Duration.ofMinutes(5);
    private static final Duration POLL_EVERY = Duration.ofMillis(500);
    /** Past this, an instance stops waiting and fails to start, saying who holds the lease. */
    private static final Duration WAIT_AT_MOST = Duration.ofMinutes(10);

    /**
     * Marks, in Flyway's history, the baseline this callback created that history with. Flyway writes
     * it into its SQL as it is: no quote in it.
     */
    private static final String HISTORY_BASELINE = "<< history created under the payonce migration lease >>";

    private static final String TABLE_EXISTS = """
            SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = ?""";
    static final String CREATE_TABLE = """
            CREATE TABLE IF NOT EXISTS payonce_migration_lease (
                id TINYINT UNSIGNED NOT NULL PRIMARY KEY,
                holder CHAR(36) NOT NULL,
                expires_at DATETIME(6) NOT NULL
            ) ENGINE = InnoDB""";
    private static final String TAKE = "INSERT INTO payonce_migration_lease (id, holder, expires_at) VALUES (1, ?, UTC_TIMESTAMP(6) + INTERVAL ? SECOND)";
    private static final String HOLDER = "SELECT holder FROM payonce_migration_lease WHERE id = 1";
    private static final String TAKE_OVER_EXPIRED = "DELETE FROM payonce_migration_lease WHERE id = 1 AND expires_at < UTC_TIMESTAMP(6)";
    private static final String RENEW = "UPDATE payonce_migration_lease SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? SECOND WHERE id = 1 AND holder = ?";
    private static final String RELEASE = "DELETE FROM payonce_migration_lease WHERE id = 1 AND holder = ?";

    /** Opens a connection to the database Flyway migrates, as Flyway's own data source reaches it. */
    @FunctionalInterface
    interface Connections {
        Connection open() throws SQLException;
    }

    private final String holder = UUID.randomUUID().toString();
    private final Connections connections;
    /**
     * The lease's own connection, open from taking it to giving it back; none off a cluster. Not one of
     * Flyway's pool, which Quarkus may close before {@link #release()} when a start fails
     * ({@link MigrationLeaseRegistration}).
     */
    private Connection lease;

    MigrationLease(Connections connections) {
        this.connections = connections;
    }

    /**
     * Taken as Flyway starts validating, checked for before it migrates, renewed around each migration,
     * and given back when the migration ends either way, when validation fails before it, or after a
     * validation run on its own. A start that fails anywhere else gives it back as it shuts down.
     */
    @Override
    public boolean supports(Event event, Context context) {
        return switch (event) {
            case BEFORE_VALIDATE, BEFORE_MIGRATE, BEFORE_EACH_MIGRATE, AFTER_EACH_MIGRATE,
                 AFTER_MIGRATE, AFTER_MIGRATE_ERROR, AFTER_VALIDATE_ERROR, AFTER_VALIDATE_OPERATION_FINISH -> true;
            default -> false;
        };
    }

    /**
     * Only around each migration, whose transaction Flyway's connection may hold. Elsewhere Flyway would
     * wrap the callback in a transaction of its own and commit it afterwards: after a wait for the
     * lease, a commit that fails once the proxy has closed that connection meanwhile (a failover), with
     * the lease taken. The callback only reads on Flyway's connection and writes on the lease's own.
     */
    @Override
    public boolean canHandleInTransaction(Event event, Context context) {
        return event == Event.BEFORE_EACH_MIGRATE || event == Event.AFTER_EACH_MIGRATE;
    }

    @Override
    public void handle(Event event, Context context) {
        try {
            switch (event) {
                case BEFORE_VALIDATE -> takeIfInCluster(context);
                case BEFORE_MIGRATE -> refuseToMigrateAClusterWithoutTheLease(context);
                case BEFORE_EACH_MIGRATE, AFTER_EACH_MIGRATE -> renew();
                default -> release();
            }
        } catch (SQLException e) {
            throw new IllegalStateException("The migration lease failed: " + e.getMessage(), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while waiting for the migration lease", e);
        }
    }

    @Override
    public String getCallbackName() {
        return "payonce-migration-lease";
    }

    /** On a cluster: the lease, then, under it, Flyway's history table if the schema has none yet. */
    private void takeIfInCluster(Context context) throws SQLException, InterruptedException {
        if (lease != null || !inCluster(context)) {
            return;
        }
        reconnect();
        try {
            waitForTheLease();
            LOG.infof("Took the migration lease as %s", holder);
            // Still this instance's, had it stalled past the term since taking it.
            renew();
            createFlywayHistoryIfMissing(context.getConfiguration());
        } catch (SQLException | InterruptedException | RuntimeException failed) {
            // Flyway calls no error callback for a failure here, before it validates.
            release();
            throw failed;
        }
    }

    /** Whether the server is a Galera node; a node configured against Galera's needs fails the start. */
    private static boolean inCluster(Context context) throws SQLException {
        Map<String, String> settings = GaleraSettingsCheck.settings(context.getConnection());
        if (!GaleraSettingsCheck.inCluster(settings)) {
            return false;
        }
        GaleraSettingsCheck.problem(settings).ifPresent(problem -> {
            throw new IllegalStateException(problem);
        });
        return true;
    }

    /**
     * Flyway validated nothing before migrating (validate-on-migrate is off), so the lease was not
     * taken, and Flyway has created its history table outside it. On a cluster that is refused.
     */
    private void refuseToMigrateAClusterWithoutTheLease(Context context) throws SQLException {
        if (lease == null && inCluster(context)) {
            throw new IllegalStateException("On a Galera cluster payonce takes its migration lease as Flyway starts validating:"
                    + " set quarkus.flyway.validate-on-migrate back to true");
        }
    }

    /**
     * Has Flyway create its history table, as a baseline at version 0, if the schema has none yet: by a
     * Flyway of its own on the same configuration, without callbacks, so that the table is Flyway's
     * own. Baseline is the one command of Flyway's that creates the table in a non-empty schema.
     */
    private void createFlywayHistoryIfMissing(Configuration configuration) throws SQLException {
        if (tableExists(configuration.getTable())) {
            return;
        }
        Flyway.configure(configuration.getClassLoader())
                .configuration(configuration)
                .callbacks(new Callback[0])
                .baselineVersion("0")
                .baselineDescription(HISTORY_BASELINE)
                .load()
                .baseline();
        LOG.infof("Created Flyway's history table %s under the migration lease", configuration.getTable());
    }

    private boolean tableExists(String table) throws SQLException {
        try (PreparedStatement exists = lease.prepareStatement(TABLE_EXISTS)) {
            exists.setString(1, table);
            try (ResultSet count = exists.executeQuery()) {
                count.next();
                return count.getLong(1) > 0;
            }
        }
    }

    private void waitForTheLease() throws SQLException, InterruptedException {
        if (!tableExists("payonce_migration_lease")) {
            // DDL pauses every node's commits while it runs: only on the first start.
            try (Statement statement = lease.createStatement()) {
                statement.execute(CREATE_TABLE);
            }
        }
        long deadline = System.nanoTime() + WAIT_AT_MOST.toNanos();
        boolean said = false;
        while (!taken()) {
            if (!said) {
                LOG.infof("Waiting for the migration lease, held by %s", currentHolder());
                said = true;
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("Another instance (" + currentHolder() + ") has held the migration lease for "
                        + WAIT_AT_MOST.toMinutes() + " minutes; delete its row in payonce_migration_lease once it is surely gone");
            }
            // Flyway's thread, at start, before the instance serves anything: no event loop waits here.
            Thread.sleep(POLL_EVERY.toMillis());
        }
    }

    /**
     * A new connection for the lease, in place of one the proxy closed (it closes every session of
     * a node it takes out): the lease's statements each name its holder, so sending one again is safe.
     */
    private void reconnect() throws SQLException {
        if (lease != null) {
            try {
                lease.close();
            } catch (SQLException alreadyGone) {
                LOG.debugf("Closing a lost lease connection: %s", alreadyGone.getMessage());
            }
        }
        lease = connections.open();
        lease.setAutoCommit(true);
    }

    private static boolean lost(SQLException failure) {
        return failure.getSQLState() != null && failure.getSQLState().startsWith("08");
    }

    /** Whether this instance now holds the lease; an expired one is cleared for the next try. */
    private boolean taken() throws SQLException {
        try (PreparedStatement take = lease.prepareStatement(TAKE)) {
            take.setString(1, holder);
            take.setLong(2, TERM.toSeconds());
            take.executeUpdate();
            return true;
        } catch (SQLException heldElsewhere) {
            pollAgainOn(heldElsewhere);
        }
        if (holder.equals(currentHolder())) {
            // This instance's own INSERT committed, and its answer was lost with the connection.
            return true;
        }
        try (Statement statement = lease.createStatement()) {
            if (statement.executeUpdate(TAKE_OVER_EXPIRED) > 0) {
                LOG.warn("Cleared an expired migration lease: an instance stopped while it migrated");
            }
        } catch (SQLException busy) {
            pollAgainOn(busy);
        }
        return false;
    }

    private void pollAgainOn(SQLException failure) throws SQLException {
        if (lost(failure)) {
            reconnect();
        } else if (!worthPollingAgain(failure)) {
            throw failure;
        }
    }

    /** Held elsewhere, a busy row, a conflicting write set, a node not ready yet. */
    private static boolean worthPollingAgain(SQLException failure) {
        return SqlErrors.isDuplicateKey(failure) || SqlErrors.isLockWaitTimeout(failure) || SqlErrors.isDeadlock(failure)
                || SqlErrors.isNodeNotPrepared(failure);
    }

    private String currentHolder() {
        try (Statement statement = lease.createStatement(); ResultSet row = statement.executeQuery(HOLDER)) {
            return row.next() ? row.getString(1) : "nobody, now";
        } catch (SQLException e) {
            return "unknown: " + e.getMessage();
        }
    }

    /** Extends the lease by its term; fails the migration if it is no longer this instance's. */
    private void renew() throws SQLException {
        if (lease == null) {
            return;
        }
        int renewed;
        try {
            renewed = extend();
        } catch (SQLException failure) {
            // The renewal names its holder, so sending it again is safe: on a new connection in place of
            // a lost one, or after another instance's first start aborted it by creating the lease's
            // table (1213), which it does only once, having found no table.
            if (lost(failure)) {
                reconnect();
            } else if (!SqlErrors.isDeadlock(failure)) {
                throw failure;
            }
            renewed = extend();
        }
        if (renewed == 0) {
            throw new IllegalStateException("The migration lease of " + holder + " expired while it migrated, and "
                    + currentHolder() + " holds it now: this instance stops rather than migrate beside it");
        }
    }

    private int extend() throws SQLException {
        try (PreparedStatement renew = lease.prepareStatement(RENEW)) {
            renew.setLong(1, TERM.toSeconds());
            renew.setString(2, holder);
            return renew.executeUpdate();
        }
    }

    /**
     * Gives the lease back, if this instance still holds it: when Flyway is done, and as the application
     * shuts down after a start that failed where Flyway calls no error callback (on the thread that ran
     * Flyway, once Flyway has thrown), as Flyway's named lock ends with its session on one server. Best
     * effort: a lease that could not be deleted expires by itself. On a new connection in place of a
     * lost one, and once more after a conflicting DDL aborted the delete.
     */
    void release() {
        if (lease == null) {
            return;
        }
        try {
            if (!lease.isValid(2)) {
                reconnect();
            }
            // Logged before the release, so that the lines of two instances order their leases as the database did.
            LOG.infof("Releasing the migration lease of %s", holder);
            int deleted;
            try {
                deleted = delete();
            } catch (SQLException failure) {
                if (!SqlErrors.isDeadlock(failure)) {
                    throw failure;
                }
                deleted = delete();
            }
            if (deleted > 0) {
                LOG.infof("Released the migration lease of %s", holder);
            } else {
                LOG.warnf("The migration lease of %s was no longer its own to release", holder);
            }
        } catch (SQLException e) {
            LOG.warnf("Could not release the migration lease of %s; it expires within %s: %s", holder, TERM, e.getMessage());
        } finally {
            try {
                lease.close();
            } catch (SQLException alreadyGone) {
                LOG.debugf("Closing the lease's connection: %s", alreadyGone.getMessage());
            }
            lease = null;
        }
    }

    private int delete() throws SQLException {
        try (PreparedStatement release = lease.prepareStatement(RELEASE)) {
            release.setString(1, holder);
            return release.executeUpdate();
        }
    }
}
