package io.payonce.config;

import io.quarkus.runtime.ApplicationLifecycleManager;
import io.quarkus.runtime.Quarkus;
import io.quarkus.runtime.annotations.QuarkusMain;

/**
 * payonce's entry point: Quarkus's own, but a start that fails ends with one plain line that names
 * its cause ({@link StartFailure}) instead of the failure nested in one document. The exit is
 * Quarkus's: dev mode keeps running for a fix, a packaged application exits non-zero.
 */
@QuarkusMain
public final class Main {

    private Main() {
    }

    public static void main(String... args) {
        Quarkus.run(null, Main::exited, args);
    }

    private static void exited(int code, Throwable failure) {
        try {
            if (failure != null) {
                StartFailure.of(failure).log();
            }
        } finally {
            ApplicationLifecycleManager.getDefaultExitCodeHandler().accept(code, failure);
        }
    }
}
