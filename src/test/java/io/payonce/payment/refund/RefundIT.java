package io.payonce.payment.refund;

import io.quarkus.test.junit.QuarkusIntegrationTest;

/** The same tests against the packaged application: the JVM jar, or the native executable with -Dnative. */
@QuarkusIntegrationTest
class RefundIT extends RefundTest {
}
