package io.payonce.db;

import io.agroal.api.AgroalDataSource;
import io.payonce.config.PayonceConfig;
import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Optional;

/**
 * Refuses to start on a database server whose own time zone is not UTC until the operator confirms
 * that every stored time is UTC ({@code payonce.database.times-stored-in-utc}). payonce writes and
 * reads its zone-less {@code DATETIME} columns in UTC ({@link SessionSettings}); a version before it
 * wrote the server's wall clock. On such a server old rows, and rows still written by old instances
 * during a rolling update, would be read hours off: the auto-close job would close orders just
 * created, a card payment's lease would look expired while its worker still holds it. UPGRADING.md
 * ("Times as instants in UTC") says how to convert, with every instance stopped. It runs once, at
 * start, on the JDBC pool Flyway uses, before any request is served.
 */
@Startup
@ApplicationScoped
public class ServerTimeZoneCheck {

    /** The server's wall clock against UTC, in minutes, in a session that keeps the server's zone. */
    private static final String SERVER_OFFSET_MINUTES = "SELECT TIMESTAMPDIFF(MINUTE, UTC_TIMESTAMP(), NOW())";

    public ServerTimeZoneCheck(AgroalDataSource dataSource, PayonceConfig config) throws SQLException {
        try (Connection connection = dataSource.getConnection()) {
            problem(offsetMinutes(connection), config.database().timesStoredInUtc()).ifPresent(problem -> {
                throw new IllegalStateException(problem);
            });
        }
    }

    static int offsetMinutes(Connection connection) throws SQLException {
        try (Statement statement = connection.createStatement(); ResultSet offset = statement.executeQuery(SERVER_OFFSET_MINUTES)) {
            offset.next();
            return offset.getInt(1);
        }
    }

    static Optional<String> problem(int offsetMinutes, boolean timesStoredInUtc) {
        if (offsetMinutes == 0 || timesStoredInUtc) {
            return Optional.empty();
        }
        return Optional.of("The database server's time zone is " + offsetMinutes + " minutes from UTC. payonce stores times in UTC;"
                + " rows written by an earlier version hold the server's wall clock. Stop every instance, convert them"
                + " (UPGRADING.md, \"Times as instants in UTC\"), then start with PAYONCE_DATABASE_TIMES_STORED_IN_UTC=true."
                + " On a new, empty database set it at once.");
    }
}
