package io.payonce.payment.card;

import io.quarkus.test.junit.QuarkusIntegrationTest;

/** The same tests against the packaged application: the JVM jar, or the native executable with -Dnative. */
@QuarkusIntegrationTest
class CardPayIT extends CardPayTest {
}
