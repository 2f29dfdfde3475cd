package io.payonce.api;

import io.payonce.metrics.RepeatDefence;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Declares what makes a repeat of a write endpoint harmless, in the vocabulary its answers are
 * counted in ({@link RepeatDefence}). Every POST, PUT, PATCH and DELETE endpoint carries one; a test
 * fails the build for any that does not.
 */
@Documented
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
public @interface RepeatProtection {

    RepeatDefence[] value();
}
