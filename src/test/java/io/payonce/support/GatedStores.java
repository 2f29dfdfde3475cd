package io.payonce.support;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.List;
import java.util.Map;

/**
 * payonce reaching MariaDB, RabbitMQ and Redis each through a {@link TcpGate} the test shuts and
 * opens: that store goes down and comes back while the others stay up. The tests' own clients
 * still reach the stores directly. One profile for every outage test, so that Quarkus starts it
 * once for all of them. A test takes a store away for its whole run with {@link StoreDown}, or for
 * a stretch of it with {@link #away}; either way the gate is open again when the test ends.
 */
public final class GatedStores implements QuarkusTestProfile {

    private static volatile TcpGate mariaDb;
    private static volatile TcpGate rabbitMq;
    private static volatile TcpGate redis;

    /** The stores a test can take away from payonce. */
    public enum Store {
        MARIADB, RABBITMQ, REDIS;

        public TcpGate gate() {
            return switch (this) {
                case MARIADB -> mariaDb;
                case RABBITMQ -> rabbitMq;
                case REDIS -> redis;
            };
        }
    }

    /** An outage while it is open: {@code store}'s gate shut now, and open again when the outage closes, whatever happened. */
    public static Outage away(Store store) {
        TcpGate gate = store.gate();
        gate.shut();
        return gate::open;
    }

    /** A store's absence, ended by {@link #close()}; for try-with-resources. */
    @FunctionalInterface
    public interface Outage extends AutoCloseable {
        @Override
        void close();
    }

    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(Gates.class));
    }

    public static final class Gates implements QuarkusTestResourceLifecycleManager {
        @Override
        public Map<String, String> start() {
            mariaDb = TcpGate.to(portOf("PAYONCE_DB_PORT", 3306));
            rabbitMq = TcpGate.to(portOf("PAYONCE_RABBITMQ_PORT", 5672));
            redis = TcpGate.to(portOf("PAYONCE_REDIS_PORT", 6379));
            String database = System.getenv().getOrDefault("PAYONCE_TEST_DB_NAME", "payonce_test");
            return Map.of(
                    "quarkus.datasource.reactive.url", "mysql://127.0.0.1:" + mariaDb.port() + "/" + database,
                    "quarkus.datasource.jdbc.url", "jdbc:mariadb://127.0.0.1:" + mariaDb.port() + "/" + database + "?createDatabaseIfNotExist=true",
                    // Back within a second of the gate opening, not the two seconds of production.
                    "rabbitmq-port", Integer.toString(rabbitMq.port()), "rabbitmq-reconnect-interval", "1",
                    "quarkus.redis.hosts", "redis://127.0.0.1:" + redis.port());
        }

        @Override
        public void stop() {
            mariaDb.close();
            rabbitMq.close();
            redis.close();
        }

        private static int portOf(String variable, int fallback) {
            return Integer.parseInt(System.getenv().getOrDefault(variable, Integer.toString(fallback)));
        }
    }
}
