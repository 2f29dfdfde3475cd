package io.payonce.db;

import io.quarkus.test.junit.QuarkusIntegrationTest;

/** The same tests against the packaged application: the JVM jar, or the native executable with -Dnative. */
@QuarkusIntegrationTest
class TimestampsIT extends TimestampsTest {
}
