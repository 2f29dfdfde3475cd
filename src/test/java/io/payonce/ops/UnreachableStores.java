package io.payonce.ops;

import io.payonce.support.FreePorts;
import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.Map;

/** Points payonce at a port where nothing listens, for one store or the other. */
public final class UnreachableStores {

    /** A port that was free a moment ago and that nothing here listens on, so connecting fails at once. */
    static final String CLOSED_PORT = Integer.toString(FreePorts.next());

    private UnreachableStores() {
    }

    public static final class Redis implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of("quarkus.redis.hosts", "redis://127.0.0.1:" + CLOSED_PORT);
        }
    }

    public static final class MariaDb implements QuarkusTestProfile {
        @Override
        public Map<String, String> getConfigOverrides() {
            return Map.of(
                    "quarkus.datasource.reactive.url", "mysql://127.0.0.1:" + CLOSED_PORT + "/payonce_test",
                    "quarkus.datasource.jdbc.url", "jdbc:mariadb://127.0.0.1:" + CLOSED_PORT + "/payonce_test",
                    "quarkus.flyway.migrate-at-start", "false",
                    "quarkus.flyway.clean-at-start", "false");
        }
    }
}
