package io.payonce.support;

import java.util.HashMap;
import java.util.Map;

/** {@link BoundsOutlastHolds} for the tests that set their races up on the Redis Cluster of {@link RedisClusterProfile}. */
public final class BoundsOutlastHoldsOnRedisCluster extends RedisClusterProfile {

    @Override
    public Map<String, String> getConfigOverrides() {
        Map<String, String> both = new HashMap<>(super.getConfigOverrides());
        both.putAll(new BoundsOutlastHolds().getConfigOverrides());
        return both;
    }
}
