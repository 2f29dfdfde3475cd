package io.payonce.support;

import io.payonce.support.GatedStores.Store;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.platform.commons.support.AnnotationSupport;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * {@code store} is down for payonce during each test so marked (on a class: each of its tests): its
 * gate in {@link GatedStores} is shut before the test and opened after it, even when the test fails,
 * so that an outage never spills into the next test that shares the profile.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@ExtendWith(StoreDown.Gate.class)
public @interface StoreDown {

    Store value();

    /** Shuts the marked store's gate before each test and opens it after. */
    final class Gate implements BeforeEachCallback, AfterEachCallback {

        @Override
        public void beforeEach(ExtensionContext context) {
            store(context).gate().shut();
        }

        @Override
        public void afterEach(ExtensionContext context) {
            store(context).gate().open();
        }

        /** The method's mark if it has one, else the class's. */
        private static Store store(ExtensionContext context) {
            return AnnotationSupport.findAnnotation(context.getRequiredTestMethod(), StoreDown.class)
                    .or(() -> AnnotationSupport.findAnnotation(context.getRequiredTestClass(), StoreDown.class))
                    .orElseThrow()
                    .value();
        }
    }
}
