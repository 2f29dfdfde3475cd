package io.payonce.db;

import io.payonce.support.Database;
import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A server whose wall clock is not UTC stops the start until the operator confirms the stored times
 * are UTC. The server's zone is played by the session's, which is what NOW() follows.
 */
class ServerTimeZoneCheckTest {

    @Test
    void aServerFiveHoursWestOfUtcStopsTheStartUntilTheTimesAreConfirmed() throws SQLException {
        int offset = offsetInZone("-05:00");
        assertEquals(-300, offset);
        assertTrue(ServerTimeZoneCheck.problem(offset, false).orElseThrow().contains("PAYONCE_DATABASE_TIMES_STORED_IN_UTC=true"));
        assertTrue(ServerTimeZoneCheck.problem(offset, true).isEmpty(), "confirmed: the start goes on");
    }

    @Test
    void aServerInUtcNeedsNoConfirmation() throws SQLException {
        int offset = offsetInZone("+00:00");
        assertEquals(0, offset);
        assertTrue(ServerTimeZoneCheck.problem(offset, false).isEmpty());
    }

    private static int offsetInZone(String zone) throws SQLException {
        try (Connection connection = Database.forTests().connect(); Statement statement = connection.createStatement()) {
            statement.execute("SET time_zone = '" + zone + "'");
            return ServerTimeZoneCheck.offsetMinutes(connection);
        }
    }
}
