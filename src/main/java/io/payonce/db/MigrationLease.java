package io.payonce.db;

import org.flywaydb.core.api.callback.Callback;
import org.flywaydb.core.api.callback.Context;
import org.flywaydb.core.api.callback.Event;
import org.jboss.logging.Logger;

import javax.sql.DataSource;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Lets one instance at a time migrate a Galera cluster. On one server Flyway serialises instances
 * that start together with a named lock (GET_LOCK), held by its session across every migration. A
 * Galera node refuses GET_LOCK, so Flyway falls back to locking its history table with SELECT … FOR
 * UPDATE in each migration's transaction, and a migration's DDL commits that transaction at once:
 * the next instance then takes the lock while the first is still migrating, finds the same version
 * pending and runs it again (seen in GaleraIT: two instances through one node, one failing on a
 * duplicate history row after running the migration a second time).
 *
 * <p>So on a cluster, and only there, an instance first takes a lease: one row in a table of its
 * own, inserted with autocommit. Two instances inserting it at once on one node meet on its primary
 * key (1062); on two nodes, in certification (1213, the later COMMIT fails). The holder renews the
 * lease while it migrates and deletes it when done; a lease its holder let expire (an instance that
 * crashed while migrating) is taken over by the next instance, which then finds whatever the crash
 * left, as Flyway would on one server.
 */
final class MigrationLease implements Callback {

    private static final Logger LOG = Logger.getLogger(MigrationLease.class);

    private static final Duration TERM = Duration.ofSeconds(30);
    private static final Duration RENEW_EVERY = Duration.ofSeconds(10);
    private static final Duration POLL_EVERY = Duration.ofMillis(500);
    /** Past this, an instance stops waiting and fails to start, saying who holds the lease. */
    private static final Duration WAIT_AT_MOST = Duration.ofMinutes(10);

    private static final String TABLE = """
            CREATE TABLE IF NOT EXISTS payonce_migration_lease (
                id TINYINT UNSIGNED NOT NULL PRIMARY KEY,
                holder CHAR(36) NOT NULL,
                expires_at DATETIME(6) NOT NULL
            ) ENGINE = InnoDB""";
    private static final String TAKE = "INSERT INTO payonce_migration_lease (id, holder, expires_at) VALUES (1, ?, UTC_TIMESTAMP(6) + INTERVAL ? SECOND)";
    private static final String TAKE_OVER_EXPIRED = "DELETE FROM payonce_migration_lease WHERE id = 1 AND expires_at < UTC_TIMESTAMP(6)";
    private static final String RENEW = "UPDATE payonce_migration_lease SET expires_at = UTC_TIMESTAMP(6) + INTERVAL ? SECOND WHERE id = 1 AND holder = ?";
    private static final String RELEASE = "DELETE FROM payonce_migration_lease WHERE id = 1 AND holder = ?";

    private final String holder = UUID.randomUUID().toString();
    private ScheduledExecutorService renewal;

    @Override
    public boolean supports(Event event, Context context) {
        return event == Event.BEFORE_MIGRATE || event == Event.AFTER_MIGRATE || event == Event.AFTER_MIGRATE_ERROR;
    }

    @Override
    public boolean canHandleInTransaction(Event event, Context context) {
        return true;
    }

    @Override
    public void handle(Event event, Context context) {
        DataSource dataSource = context.getConfiguration().getDataSource();
        try {
            if (event == Event.BEFORE_MIGRATE) {
                takeIfInCluster(dataSource);
            } else if (renewal != null) {
                release(dataSource);
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

    private void takeIfInCluster(DataSource dataSource) throws SQLException, InterruptedException {
        try (Connection connection = dataSource.getConnection()) {
            connection.setAutoCommit(true);
            if (!"ON".equalsIgnoreCase(GaleraSettingsCheck.settings(connection).get("wsrep_on"))) {
                return;
            }
            try (Statement statement = connection.createStatement()) {
                statement.execute(TABLE);
            }
            long deadline = System.nanoTime() + WAIT_AT_MOST.toNanos();
            while (!taken(connection)) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("Another instance has held the migration lease for " + WAIT_AT_MOST.toMinutes()
                            + " minutes; see payonce_migration_lease");
                }
                Thread.sleep(POLL_EVERY.toMillis());
            }
        }
        LOG.infof("Took the migration lease as %s", holder);
        renewal = Executors.newSingleThreadScheduledExecutor(task -> {
            Thread thread = new Thread(task, "migration-lease");
            thread.setDaemon(true);
            return thread;
        });
        renewal.scheduleAtFixedRate(() -> renew(dataSource), RENEW_EVERY.toMillis(), RENEW_EVERY.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Whether this instance now holds the lease; an expired one is cleared for the next try. */
    private boolean taken(Connection connection) throws SQLException {
        try (PreparedStatement take = connection.prepareStatement(TAKE)) {
            take.setString(1, holder);
            take.setLong(2, TERM.toSeconds());
            take.executeUpdate();
            return true;
        } catch (SQLException heldElsewhere) {
            int code = heldElsewhere.getErrorCode();
            if (code != SqlErrors.DUPLICATE_ENTRY && code != SqlErrors.DEADLOCK) {
                throw heldElsewhere;
            }
        }
        try (Statement statement = connection.createStatement()) {
            if (statement.executeUpdate(TAKE_OVER_EXPIRED) > 0) {
                LOG.warn("Cleared an expired migration lease: an instance stopped while it migrated");
            }
        }
        return false;
    }

    private void renew(DataSource dataSource) {
        try (Connection connection = dataSource.getConnection(); PreparedStatement renew = connection.prepareStatement(RENEW)) {
            connection.setAutoCommit(true);
            renew.setLong(1, TERM.toSeconds());
            renew.setString(2, holder);
            if (renew.executeUpdate() == 0) {
                LOG.errorf("The migration lease of %s expired while it migrated: another instance may migrate at the same time", holder);
            }
        } catch (SQLException e) {
            LOG.warnf("Could not renew the migration lease: %s", e.getMessage());
        }
    }

    private void release(DataSource dataSource) throws SQLException {
        renewal.shutdownNow();
        renewal = null;
        try (Connection connection = dataSource.getConnection(); PreparedStatement release = connection.prepareStatement(RELEASE)) {
            connection.setAutoCommit(true);
            release.setString(1, holder);
            release.executeUpdate();
        }
        LOG.infof("Released the migration lease of %s", holder);
    }
}
