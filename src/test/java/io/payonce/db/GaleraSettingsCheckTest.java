package io.payonce.db;

import io.payonce.support.Database;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A Galera node set up against Galera's needs stops the start; a server not in a cluster is never
 * held to them. GaleraIT starts payonce on a cluster configured as docs/operations/scaling.md says.
 */
class GaleraSettingsCheckTest {

    private static final Map<String, String> GALERA_AS_NEEDED = Map.of(
            "wsrep_on", "ON", "binlog_format", "ROW", "innodb_autoinc_lock_mode", "2", "wsrep_osu_method", "TOI");

    @Test
    void theMachinesOwnServerIsNotInAClusterAndPasses() throws SQLException {
        try (Connection connection = Database.forTests().connect()) {
            Map<String, String> settings = GaleraSettingsCheck.settings(connection);

            assertEquals("OFF", settings.get("wsrep_on"), "this machine's MariaDB runs without Galera");
            assertTrue(GaleraSettingsCheck.problem(settings).isEmpty(), "its MIXED binlog and lock mode 1 are not Galera's business");
        }
    }

    @Test
    void aNodeAsGaleraNeedsPasses() {
        assertTrue(GaleraSettingsCheck.problem(GALERA_AS_NEEDED).isEmpty());
    }

    @Test
    void aNodeWithStatementWriteSetsConsecutiveAutoIncrementLocksOrRollingSchemaChangesStopsTheStart() {
        String mixed = GaleraSettingsCheck.problem(with("binlog_format", "MIXED")).orElseThrow();
        String consecutive = GaleraSettingsCheck.problem(with("innodb_autoinc_lock_mode", "1")).orElseThrow();
        String rollingSchemaChanges = GaleraSettingsCheck.problem(with("wsrep_osu_method", "RSU")).orElseThrow();

        assertTrue(mixed.contains("binlog_format is MIXED, not ROW"), mixed);
        assertTrue(consecutive.contains("innodb_autoinc_lock_mode is 1, not 2"), consecutive);
        assertTrue(rollingSchemaChanges.contains("wsrep_OSU_method is RSU, not TOI"), rollingSchemaChanges);
        assertTrue(consecutive.contains("docs/operations/scaling.md, \"Running on a Galera cluster\""), "points at the page's section: " + consecutive);
    }

    private static Map<String, String> with(String name, String value) {
        Map<String, String> settings = new HashMap<>(GALERA_AS_NEEDED);
        settings.put(name, value);
        return settings;
    }
}
