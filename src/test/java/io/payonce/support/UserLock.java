package io.payonce.support;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.UUID;

/**
 * A MariaDB user lock ({@code GET_LOCK}) held from a session of the test's own, for a trigger of the
 * test's to wait on: the statement that fires the trigger stops there, keeping the row locks it has
 * taken, until the test lets go. Closing ends the session, which lets go too, so a test that fails
 * half way never leaves payonce's statement waiting.
 */
public final class UserLock implements AutoCloseable {

    /**
     * The longest a statement waits at the gate ({@link #waitStatement}), in seconds: a bound only for a
     * test that hangs while it holds the lock, since the test lets go once it has seen its set-up, and
     * closing lets go when it fails; no gate opens by itself first. Under {@link BoundsOutlastHolds}'
     * 20 s lock wait and 30 s statement bound: what waits behind the gated statement, having begun to
     * wait later, is still waiting whenever the gate opens, and the server never cuts the gated statement
     * off. A class whose triggers wait here runs on that profile: under the test profile's 1 s lock wait
     * the twins behind the gate would give up first, and its 2 s statement bound would cut the gated
     * statement off.
     */
    public static final int GATE_SECONDS = 15;

    private final Connection session;
    private final String name;

    private UserLock(Connection session, String name) {
        this.session = session;
        this.name = name;
    }

    /** Takes a lock of a new name: user locks are the server's, shared by every database on it. */
    public static UserLock hold(Database db) throws SQLException {
        String name = "payonce-test-" + UUID.randomUUID();
        Connection session = db.connect();
        try {
            if (select(session, "SELECT GET_LOCK(?, 0)", name) != 1) {
                throw new IllegalStateException("user lock " + name + " not taken");
            }
        } catch (SQLException | RuntimeException e) {
            session.close();
            throw e;
        }
        return new UserLock(session, name);
    }

    /**
     * The statement for a trigger: waits for the lock until the test lets go ({@link #GATE_SECONDS} at
     * most) and gives it back at once.
     */
    public String waitStatement() {
        return "DO GET_LOCK('" + name + "', " + GATE_SECONDS + "), RELEASE_LOCK('" + name + "')";
    }

    /** The connection id of the session waiting in {@link #waitStatement}, once there is one; fails after 10 s. */
    public long awaitWaiter(Database db) {
        return Await.until(() -> db.count("SELECT COALESCE(MAX(id), 0) FROM information_schema.PROCESSLIST WHERE info LIKE ?",
                atTheGate()), id -> id != 0, Duration.ofSeconds(10), "a statement waiting for user lock " + name);
    }

    /** How many sessions wait in {@link #waitStatement} now, which MariaDB shows as their statement. */
    public long waiting(Database db) {
        return db.count("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE info LIKE ?", atTheGate());
    }

    /** Lets go: the session waiting for the lock goes on at once. */
    public void release() throws SQLException {
        select(session, "SELECT RELEASE_LOCK(?)", name);
    }

    /**
     * Takes the lock again after {@link #release}, once the statement that went through has given it
     * back, so that the next statement to reach the gate waits there; fails after 10 s.
     */
    public void takeAgain() throws SQLException {
        if (select(session, "SELECT GET_LOCK(?, 10)", name) != 1) {
            throw new IllegalStateException("user lock " + name + " not taken again");
        }
    }

    @Override
    public void close() throws SQLException {
        session.close();
    }

    /** The start of {@link #waitStatement}, up to the lock's name, as a LIKE pattern (a UUID has no {@code _} or {@code %}). */
    private String atTheGate() {
        return "DO GET_LOCK('" + name + "'%";
    }

    private static long select(Connection session, String sql, String name) throws SQLException {
        try (PreparedStatement statement = session.prepareStatement(sql)) {
            statement.setString(1, name);
            try (ResultSet rows = statement.executeQuery()) {
                rows.next();
                return rows.getLong(1);
            }
        }
    }
}
