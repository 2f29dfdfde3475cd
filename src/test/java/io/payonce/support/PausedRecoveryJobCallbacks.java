package io.payonce.support;

import io.payonce.payment.operation.RecoveryJob;
import io.quarkus.arc.Arc;
import io.quarkus.scheduler.Scheduler;
import io.quarkus.test.junit.callback.QuarkusTestAfterEachCallback;
import io.quarkus.test.junit.callback.QuarkusTestBeforeEachCallback;
import io.quarkus.test.junit.callback.QuarkusTestMethodContext;

import java.util.Arrays;

/**
 * Pauses the recovery job before each test of a class marked {@link PausedRecoveryJob}, and resumes
 * it after. Quarkus calls these inside the application, where the scheduler is; a plain JUnit
 * extension runs outside it. The mark is matched by name, since the test class and this one may be
 * loaded apart.
 */
public class PausedRecoveryJobCallbacks implements QuarkusTestBeforeEachCallback, QuarkusTestAfterEachCallback {

    @Override
    public void beforeEach(QuarkusTestMethodContext context) {
        if (marked(context)) {
            Arc.container().instance(Scheduler.class).get().pause(RecoveryJob.IDENTITY);
        }
    }

    @Override
    public void afterEach(QuarkusTestMethodContext context) {
        if (marked(context)) {
            Arc.container().instance(Scheduler.class).get().resume(RecoveryJob.IDENTITY);
        }
    }

    private static boolean marked(QuarkusTestMethodContext context) {
        return Arrays.stream(context.getTestInstance().getClass().getAnnotations())
                .anyMatch(annotation -> annotation.annotationType().getName().equals(PausedRecoveryJob.class.getName()));
    }
}
