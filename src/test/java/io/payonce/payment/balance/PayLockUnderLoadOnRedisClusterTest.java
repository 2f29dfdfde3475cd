package io.payonce.payment.balance;

import io.payonce.support.BoundsOutlastHoldsOnRedisCluster;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/** {@link PayLockUnderLoadTest} on a three-master Redis Cluster: a storm of concurrent pays and their replays, every one with the lock. */
@QuarkusTest
@TestProfile(BoundsOutlastHoldsOnRedisCluster.class)
class PayLockUnderLoadOnRedisClusterTest extends PayLockUnderLoadTest {
}
