package io.payonce.support;

import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.List;
import java.util.Map;

/**
 * payonce on a three-master Redis Cluster of the test's own, as a cluster client. The lock's call bound
 * is 2 s here: these tests prove the lock works on a cluster, and a cold cluster client on two shared
 * cores can take longer than 250 ms for a call or two (docs/operations/scaling.md, "Running many
 * instances").
 */
public class RedisClusterProfile implements QuarkusTestProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        return Map.of("payonce.lock.call-bound", "2s");
    }

    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(PrivateRedisCluster.class));
    }
}
