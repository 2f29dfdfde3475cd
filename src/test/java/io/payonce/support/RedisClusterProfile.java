package io.payonce.support;

import io.quarkus.test.junit.QuarkusTestProfile;

import java.util.List;

/** payonce on a three-master Redis Cluster of the test's own, as a cluster client. */
public class RedisClusterProfile implements QuarkusTestProfile {

    @Override
    public List<TestResourceEntry> testResources() {
        return List.of(new TestResourceEntry(PrivateRedisCluster.class));
    }
}
