package io.payonce.order;

import io.payonce.support.BoundsOutlastHoldsOnRedisCluster;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/** {@link SubmitTokenTest} on a three-master Redis Cluster: submit tokens: issued, consumed once by concurrent submits, the consumed marker. */
@QuarkusTest
@TestProfile(BoundsOutlastHoldsOnRedisCluster.class)
class SubmitTokenOnRedisClusterTest extends SubmitTokenTest {
}
