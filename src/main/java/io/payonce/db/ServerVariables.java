package io.payonce.db;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The database server's global variables a start's check reads, by their lower-case names. SHOW,
 * not @@: a server built without Galera has no wsrep variables, and one missing reads as absent.
 */
final class ServerVariables {

    private ServerVariables() {
    }

    /** {@code names} as the server holds them; a name the server does not know is absent. Names are payonce's constants, never input. */
    static Map<String, String> read(Connection connection, String... names) throws SQLException {
        String show = "SHOW GLOBAL VARIABLES WHERE Variable_name IN ("
                + Stream.of(names).map(name -> "'" + name + "'").collect(Collectors.joining(", ")) + ")";
        Map<String, String> variables = new HashMap<>();
        try (Statement statement = connection.createStatement(); ResultSet rows = statement.executeQuery(show)) {
            while (rows.next()) {
                variables.put(rows.getString(1).toLowerCase(Locale.ROOT), rows.getString(2));
            }
        }
        return variables;
    }
}
