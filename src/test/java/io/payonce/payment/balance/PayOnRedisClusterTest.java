package io.payonce.payment.balance;

import io.payonce.support.BoundsOutlastHoldsOnRedisCluster;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/** {@link PayTest} on a three-master Redis Cluster: pays, their replays and their concurrent twins. */
@QuarkusTest
@TestProfile(BoundsOutlastHoldsOnRedisCluster.class)
class PayOnRedisClusterTest extends PayTest {
}
