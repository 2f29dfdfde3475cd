package io.payonce.support;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Holds payonce's statements of one kind on chosen nodes of a Galera cluster, so that a test makes
 * two nodes' transactions overlap on purpose rather than hope they do. A trigger makes each such
 * statement wait for its node's row of a gate table; a session of the test's own holds that row
 * locked on that node. Row locks hold on one node only, so each node's gate is its own; and the rows
 * a node applies from the others fire no trigger, so only the statements run there wait.
 */
public final class NodeGate implements AutoCloseable {

    private static final String TRIGGER = "node_gate";
    /** Asked of InnoDB's lock waits on the gate's rows: only the trigger locks them, the test's own sessions apart. */
    private static final String WAITING = """
            SELECT COALESCE(MAX(wait.requesting_trx_id), '') FROM information_schema.INNODB_LOCK_WAITS wait
            JOIN information_schema.INNODB_LOCKS requested ON requested.lock_id = wait.requested_lock_id
            WHERE requested.lock_table = CONCAT('`', DATABASE(), '`.`node_gate`') AND requested.lock_data = QUOTE(?)""";
    private static final String RUNNING = "SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_id = ?";

    private final PrivateGaleraCluster cluster;
    private final String database;
    private final Map<Integer, Connection> held = new HashMap<>();

    private NodeGate(PrivateGaleraCluster cluster, String database) {
        this.cluster = cluster;
        this.database = database;
    }

    /**
     * A gate, open on every node until {@link #hold}, for the rows of {@code table} that
     * {@code statement} (INSERT, UPDATE or DELETE) writes where {@code condition} holds, a trigger's
     * condition on OLD and NEW; {@link #close} removes it.
     */
    public static NodeGate before(PrivateGaleraCluster cluster, String database, String statement, String table, String condition)
            throws SQLException {
        NodeGate gate = new NodeGate(cluster, database);
        try (Connection connection = gate.connect(1); Statement ddl = connection.createStatement()) {
            ddl.execute("CREATE TABLE node_gate (node VARCHAR(16) PRIMARY KEY)");
            ddl.execute("INSERT INTO node_gate VALUES ('n1'), ('n2'), ('n3')");
        }
        try (Connection connection = gate.connect(1); Statement ddl = connection.createStatement()) {
            ddl.execute("CREATE TRIGGER " + TRIGGER + " BEFORE " + statement + " ON " + table + " FOR EACH ROW\n"
                    + "BEGIN\n"
                    + "    DECLARE gate VARCHAR(16);\n"
                    + "    IF " + condition + " THEN\n"
                    + "        SELECT node INTO gate FROM node_gate WHERE node = @@wsrep_node_name FOR UPDATE;\n"
                    + "    END IF;\n"
                    + "END");
        } catch (SQLException | RuntimeException failed) {
            // No gate table left behind for the next gate of the test to stumble on.
            gate.close();
            throw failed;
        }
        return gate;
    }

    /** From now on the gated statements run on node {@code number} wait. */
    public void hold(int number) throws SQLException {
        Connection connection = connect(number);
        try {
            connection.setAutoCommit(false);
            try (PreparedStatement lock = connection.prepareStatement("SELECT node FROM node_gate WHERE node = ? FOR UPDATE")) {
                lock.setString(1, "n" + number);
                lock.executeQuery().close();
            }
        } catch (SQLException e) {
            connection.close();
            throw e;
        }
        held.put(number, connection);
    }

    /** Lets the gated statements on node {@code number} go on. */
    public void release(int number) throws SQLException {
        try (Connection connection = held.remove(number)) {
            if (connection != null) {
                connection.rollback();
            }
        }
    }

    /** The transaction whose gated statement waits at node {@code number}'s gate: once there is one. */
    public String awaitWaiting(int number, Duration timeout) {
        return Await.until(() -> single(number, WAITING, "n" + number), trx -> !trx.isEmpty(), timeout,
                "a gated statement waiting at n" + number + "'s gate");
    }

    /** Returns once transaction {@code trx} on node {@code number} has ended, committed or rolled back. */
    public void awaitEnded(int number, String trx, Duration timeout) {
        Await.until(() -> "0".equals(single(number, RUNNING, trx)), timeout, "transaction " + trx + " on n" + number + " ending");
    }

    private String single(int number, String sql, String parameter) throws SQLException {
        try (Connection connection = connect(number); PreparedStatement statement = connection.prepareStatement(sql)) {
            statement.setString(1, parameter);
            try (ResultSet row = statement.executeQuery()) {
                row.next();
                return row.getString(1);
            }
        }
    }

    private Connection connect(int number) throws SQLException {
        Connection connection = PrivateGaleraCluster.connect(cluster.port(number));
        connection.setCatalog(database);
        return connection;
    }

    /** Lets every gated statement go on, then removes the trigger and its table. */
    @Override
    public void close() throws SQLException {
        for (int number : List.copyOf(held.keySet())) {
            release(number);
        }
        try (Connection connection = connect(1); Statement ddl = connection.createStatement()) {
            ddl.execute("DROP TRIGGER IF EXISTS " + TRIGGER);
            ddl.execute("DROP TABLE IF EXISTS node_gate");
        }
    }
}
