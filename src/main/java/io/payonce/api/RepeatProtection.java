package io.payonce.api;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Declares what makes a repeat of a write endpoint harmless. Every POST, PUT, PATCH and DELETE
 * endpoint carries one; a test fails the build for any that does not.
 */
@Documented
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
public @interface RepeatProtection {

    Mechanism[] value();

    enum Mechanism {
        /** A caller-chosen key claimed in the same transaction as the effect; repeats replay the answer. */
        IDEMPOTENCY_KEY,
        /** A one-time token consumed atomically in Redis. */
        SUBMIT_TOKEN,
        /** A short Redis lock that turns a concurrent twin away early. */
        REDIS_LOCK,
        /** A compare-and-set on the current status: only one request moves it. */
        STATE_CAS,
        /** A unique index refuses the second row. */
        UNIQUE_INDEX
    }
}
