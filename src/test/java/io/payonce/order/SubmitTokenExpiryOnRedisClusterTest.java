package io.payonce.order;

import io.payonce.support.RedisClusterProfile;
import io.quarkus.test.junit.QuarkusTest;
import io.quarkus.test.junit.TestProfile;

/** {@link SubmitTokenExpiryTest} on a three-master Redis Cluster: a submit token's time to live. */
@QuarkusTest
@TestProfile(RedisClusterProfile.class)
class SubmitTokenExpiryOnRedisClusterTest extends SubmitTokenExpiryTest {
}
