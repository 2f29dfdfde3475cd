package io.payonce.support;

import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.regex.Pattern;

/**
 * Drops the database a build's tests ran on when they end. The build names one per run
 * ({@code payonce_test_<timestamp>}, see pom.xml) so that two runs on one server never share rows;
 * only such a name is dropped, never a database somebody named by hand.
 */
public class DropTestDatabase implements LauncherSessionListener {

    private static final Pattern PER_RUN = Pattern.compile("payonce_test_[0-9]{14}");

    @Override
    public void launcherSessionClosed(LauncherSession session) {
        String name = System.getenv("PAYONCE_TEST_DB_NAME");
        if (name == null || !PER_RUN.matcher(name).matches()) {
            return;
        }
        try (Connection connection = Database.named("").connect();
             Statement statement = connection.createStatement()) {
            statement.execute("DROP DATABASE IF EXISTS `" + name + "`");
        } catch (SQLException e) {
            System.err.println("The test database " + name + " was left behind: " + e.getMessage());
        }
    }
}
