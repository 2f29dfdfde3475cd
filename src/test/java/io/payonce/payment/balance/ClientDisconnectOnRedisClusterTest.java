package io.payonce.payment.balance;

import io.payonce.support.BoundsOutlastHoldsOnRedisCluster;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/** {@link ClientDisconnectTest} on a three-master Redis Cluster: a lock held until the payment of a client that hung up has committed. */
@QuarkusTest
@TestProfile(BoundsOutlastHoldsOnRedisCluster.class)
class ClientDisconnectOnRedisClusterTest extends ClientDisconnectTest {
}
