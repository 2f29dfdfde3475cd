package io.payonce.db;

import io.agroal.api.AgroalDataSource;
import io.payonce.config.PayonceConfig;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.inject.spi.ObserverMethod;
import org.jboss.logging.Logger;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Map;
import java.util.Optional;

/**
 * Refuses to start on a MariaDB Galera node configured against what Galera needs and payonce leans
 * on: row-based write sets ({@code binlog_format=ROW}; a statement-based write set is replayed, not
 * copied, and NOW(6) or an auto-increment would differ between nodes), interleaved auto-increment
 * locks ({@code innodb_autoinc_lock_mode=2}; the other modes can deadlock the appliers), and schema
 * changes run on every node at once ({@code wsrep_OSU_method=TOI}; under RSU a migration would change
 * one node's schema only). {@link MigrationLease} checks it before any migration runs; this bean logs
 * once, at start, what payonce runs on and whether reads wait for the cluster
 * ({@code payonce.database.sync-wait}). On a server that is not in a cluster it says nothing.
 */
@Startup(ObserverMethod.DEFAULT_PRIORITY + 1)
@ApplicationScoped
public class GaleraSettingsCheck {

    private static final Logger LOG = Logger.getLogger(GaleraSettingsCheck.class);

    public GaleraSettingsCheck(AgroalDataSource dataSource, PayonceConfig config) throws SQLException {
        Map<String, String> settings;
        try (Connection connection = dataSource.getConnection()) {
            settings = settings(connection);
        }
        problem(settings).ifPresent(problem -> {
            throw new IllegalStateException(problem);
        });
        // Flyway and the start's checks are done with the JDBC pool (this bean starts after the time
        // zone's and the durable commits' checks), which nothing else uses (readiness is the reactive pool's). An idle connection left in it
        // dies with the next database outage, and would only wait there to fail: the pool keeps none of the start's.
        dataSource.flush(AgroalDataSource.FlushMode.IDLE);
        if (inCluster(settings)) {
            int syncWait = config.database().syncWait();
            LOG.infof("Running on Galera node %s of cluster %s; reads %s (payonce.database.sync-wait=%d)",
                    settings.get("wsrep_node_name"), settings.get("wsrep_cluster_name"),
                    (syncWait & 1) == 1 ? "wait for the cluster's earlier commits" : "do not wait: one node must take every write", syncWait);
        }
    }

    static Map<String, String> settings(Connection connection) throws SQLException {
        return ServerVariables.read(connection, "wsrep_on", "binlog_format", "innodb_autoinc_lock_mode", "wsrep_osu_method",
                "wsrep_cluster_name", "wsrep_node_name");
    }

    static Optional<String> problem(Map<String, String> settings) {
        if (!inCluster(settings)) {
            return Optional.empty();
        }
        StringBuilder problems = new StringBuilder();
        if (!"ROW".equalsIgnoreCase(settings.get("binlog_format"))) {
            problems.append(" binlog_format is ").append(settings.get("binlog_format")).append(", not ROW;");
        }
        if (!"2".equals(settings.get("innodb_autoinc_lock_mode"))) {
            problems.append(" innodb_autoinc_lock_mode is ").append(settings.get("innodb_autoinc_lock_mode")).append(", not 2;");
        }
        if (!"TOI".equalsIgnoreCase(settings.get("wsrep_osu_method"))) {
            problems.append(" wsrep_OSU_method is ").append(settings.get("wsrep_osu_method")).append(", not TOI;");
        }
        if (problems.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of("The database is a Galera cluster node configured against what Galera needs:" + problems
                + " set them on every node (docs/operations/scaling.md, \"Running on a Galera cluster\") and restart it.");
    }

    static boolean inCluster(Map<String, String> settings) {
        return "ON".equalsIgnoreCase(settings.get("wsrep_on"));
    }
}
