package io.payonce.payment.balance;

import io.payonce.support.BoundsOutlastHolds;
import io.quarkus.test.junit.QuarkusIntegrationTest;
import io.quarkus.test.junit.TestProfile;

/** The same tests against the packaged application: the JVM jar, or the native executable with -Dnative. */
@QuarkusIntegrationTest
// The bounds its superclass sets its races up under: Quarkus does not read a superclass's profile.
@TestProfile(BoundsOutlastHolds.class)
class PayIT extends PayTest {
}
