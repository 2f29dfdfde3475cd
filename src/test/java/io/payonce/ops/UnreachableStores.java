package io.payonce.ops;

import io.payonce.support.FreePorts;
import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.Map;

/** Points payonce at a port where nothing listens for Redis: a Redis that is not there from the start. */
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
}
