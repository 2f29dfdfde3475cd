package io.payonce.support;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;
import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.List;
import java.util.Map;

/** payonce reaching MariaDB or RabbitMQ through a {@link TcpGate} the test shuts and opens: the store goes down and comes back. */
public final class GatedStores {

    private static volatile TcpGate gate;

    private GatedStores() {
    }

    /** The gate of the running profile. */
    public static TcpGate gate() {
        return gate;
    }

    /** MariaDB behind the gate; the tests' own JDBC still reaches it directly. */
    public static final class MariaDb implements QuarkusTestProfile {
        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(GatedMariaDb.class));
        }
    }

    /** RabbitMQ behind the gate, reconnecting every second; the tests' own broker client still reaches it directly. */
    public static final class RabbitMq implements QuarkusTestProfile {
        @Override
        public List<TestResourceEntry> testResources() {
            return List.of(new TestResourceEntry(GatedRabbitMq.class));
        }
    }

    public static final class GatedMariaDb implements QuarkusTestResourceLifecycleManager {
        @Override
        public Map<String, String> start() {
            gate = TcpGate.to(Integer.parseInt(System.getenv().getOrDefault("PAYONCE_DB_PORT", "3306")));
            String database = System.getenv().getOrDefault("PAYONCE_TEST_DB_NAME", "payonce_test");
            return Map.of(
                    "quarkus.datasource.reactive.url", "mysql://127.0.0.1:" + gate.port() + "/" + database,
                    "quarkus.datasource.jdbc.url", "jdbc:mariadb://127.0.0.1:" + gate.port() + "/" + database + "?createDatabaseIfNotExist=true");
        }

        @Override
        public void stop() {
            gate.close();
        }
    }

    public static final class GatedRabbitMq implements QuarkusTestResourceLifecycleManager {
        @Override
        public Map<String, String> start() {
            gate = TcpGate.to(Integer.parseInt(System.getenv().getOrDefault("PAYONCE_RABBITMQ_PORT", "5672")));
            return Map.of("rabbitmq-port", Integer.toString(gate.port()), "rabbitmq-reconnect-interval", "1");
        }

        @Override
        public void stop() {
            gate.close();
        }
    }
}
