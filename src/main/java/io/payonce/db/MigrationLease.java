package io.payonce.db;

import org.flywaydb.core.api.callback.Callback;
import org.flywaydb.core.api.callback.Context;
import org.flywaydb.core.api.callback.Event;
import org.jboss.logging.Logger;

import javax.sql.DataSource;
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
 * needs ({@link GaleraSettingsCheck}), before any migration runs, then takes a lease: one row in a
 * table of its own, inserted with autocommit on a connection it keeps until it is done. Two instances
 * inserting it at once on one node meet on its primary key (1062); on two nodes, in certification
 * (1213, the later COMMIT fails). The holder renews the lease before and after each migration and
 * stops, failing its start, if it finds the lease no longer its own; it deletes the lease when done.
 * A lease left to expire by an instance that died while migrating is taken over by the next one, which
 * then finds whatever the crash left, as Flyway would on one server. Expiry is judged by the writer's
 * clock, the only one that matters while every instance reaches one writer.
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

    private static final String TABLE_EXISTS = """
            SELECT COUNT(*) FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name = 'payonce_migration_lease'""";
    private static final String CREATE_TABLE = """
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

    private final String holder = UUID.randomUUID().toString();
    private DataSource dataSource;
    /** The lease's own connection, open from taking it to giving it back; none off a cluster. */
    private Connection lease;

    @Override
    public boolean supports(Event event, Context context) {
        return event == Event.BEFORE_MIGRATE || event == Event.BEFORE_EACH_MIGRATE || event == Event.AFTER_EACH_MIGRATE
                || event == Event.AFTER_MIGRATE || event == Event.AFTER_MIGRATE_ERROR;
    }

    /** Yes: it only reads on Flyway's connection, and writes on the lease's own, whatever Flyway's holds open. */
    @Override
    public boolean canHandleInTransaction(Event event, Context context) {
        return true;
    }

    @Override
    public void handle(Event event, Context context) {
        try {
            switch (event) {
                case BEFORE_MIGRATE -> takeIfInCluster(context);
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

    private void takeIfInCluster(Context context) throws SQLException, InterruptedException {
        Map<String, String> settings = GaleraSettingsCheck.settings(context.getConnection());
        if (!GaleraSettingsCheck.inCluster(settings)) {
            return;
        }
        GaleraSettingsCheck.problem(settings).ifPresent(problem -> {
            throw new IllegalStateException(problem);
        });
        dataSource = context.getConfiguration().getDataSource();
        reconnect();
        try {
            waitForTheLease();
        } catch (SQLException | InterruptedException | RuntimeException notTaken) {
            // Flyway calls no AFTER_MIGRATE_ERROR for a failure here, before its migrations begin.
            release();
            throw notTaken;
        }
        LOG.infof("Took the migration lease as %s", holder);
    }

    private void waitForTheLease() throws SQLException, InterruptedException {
        try (Statement statement = lease.createStatement(); ResultSet exists = statement.executeQuery(TABLE_EXISTS)) {
            exists.next();
            if (exists.getLong(1) == 0) {
                // DDL pauses every node's commits while it runs: only on the first start.
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
        lease = dataSource.getConnection();
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
            if (!lost(failure)) {
                throw failure;
            }
            reconnect();
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

    /** Gives the lease back. Best effort: a lease that could not be deleted expires by itself. */
    private void release() {
        if (lease == null) {
            return;
        }
        try (Connection connection = lease.isValid(2) ? lease : dataSource.getConnection();
             PreparedStatement release = connection.prepareStatement(RELEASE)) {
            connection.setAutoCommit(true);
            release.setString(1, holder);
            release.executeUpdate();
            LOG.infof("Released the migration lease of %s", holder);
        } catch (SQLException e) {
            LOG.warnf("Could not release the migration lease of %s; it expires within %s: %s", holder, TERM, e.getMessage());
        } finally {
            lease = null;
        }
    }
}
