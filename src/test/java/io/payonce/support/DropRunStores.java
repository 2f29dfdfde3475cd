package io.payonce.support;

import org.junit.platform.launcher.LauncherSession;
import org.junit.platform.launcher.LauncherSessionListener;

import java.io.IOException;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;

/**
 * Drops what a build's tests made for themselves when they end: the database they ran on and the
 * RabbitMQ exchanges and queues named after it. The build names one database per run
 * ({@code payonce_test_<timestamp>}, see pom.xml) so that two runs on one server or one broker
 * never share rows or messages; only such a name is dropped, never something named by hand.
 */
public class DropRunStores implements LauncherSessionListener {

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
        if (!Broker.COMMANDS.endsWith(name) || !Broker.EVENTS.endsWith(name)) {
            return;
        }
        try (Broker broker = Broker.connect()) {
            broker.deleteRunObjects();
        } catch (IOException | TimeoutException e) {
            System.err.println("The test exchanges and queues of " + name + " were left behind: " + e.getMessage());
        }
    }
}
