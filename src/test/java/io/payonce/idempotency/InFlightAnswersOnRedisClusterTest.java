package io.payonce.idempotency;

import io.payonce.support.RedisClusterProfile;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/** {@link InFlightAnswersTest} on a three-master Redis Cluster: the answers to a repeat while the first holds the order's lock. */
@QuarkusTest
@TestProfile(RedisClusterProfile.class)
class InFlightAnswersOnRedisClusterTest extends InFlightAnswersTest {
}
