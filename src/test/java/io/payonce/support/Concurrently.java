package io.payonce.support;

import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;

/** Starts tasks on separate threads behind one gate, so that they hit the service at the same moment, and returns their answers. */
public final class Concurrently {

    private Concurrently() {
    }

    public static <T> List<T> run(int copies, Callable<T> task) throws Exception {
        return run(Collections.nCopies(copies, task));
    }

    public static <T> List<T> run(List<Callable<T>> tasks) throws Exception {
        try (RequestsInFlight<T> inFlight = RequestsInFlight.start(tasks)) {
            return inFlight.answers();
        }
    }
}
