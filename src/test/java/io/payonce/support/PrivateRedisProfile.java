package io.payonce.support;

import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.List;
import java.util.Map;

/**
 * payonce on a Redis of the test's own, for tests that pause it or watch its keys expire, with a
 * 2 s pay lock so that a pause can outlast the lock and an expiry can be waited for.
 */
public class PrivateRedisProfile implements QuarkusTestProfile {

    public static final long LOCK_TTL_MILLIS = 2000;

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("payonce.lock.ttl", LOCK_TTL_MILLIS + "ms");
    }

    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(PrivateRedis.class));
    }
}
