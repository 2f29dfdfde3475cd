package io.payonce.support;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The processor recovery job ({@code RecoveryJob}) stays paused through each test of the class, so
 * that nothing but the test moves an operation; it runs again after each test, its {@code @AfterEach}
 * methods (a simulator healed) having run. {@link PausedRecoveryJobCallbacks} does it.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.TYPE)
public @interface PausedRecoveryJob {
}
