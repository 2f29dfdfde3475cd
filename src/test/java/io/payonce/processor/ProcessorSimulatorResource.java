package io.payonce.processor;

import io.quarkus.test.common.QuarkusTestResourceLifecycleManager;

import java.util.Map;

/**
 * Starts the {@link ProcessorSimulator} for every test application (a global test resource,
 * declared on {@code CardPayTest}) and points payonce's processor client at it; the packaged
 * application of the *IT tests, native executable included, reaches it over loopback too.
 */
public class ProcessorSimulatorResource implements QuarkusTestResourceLifecycleManager {

    private static volatile ProcessorSimulator simulator;

    /** The simulator of the running test application. */
    public static ProcessorSimulator simulator() {
        return simulator;
    }

    @Override
    public Map<String, String> start() {
        simulator = ProcessorSimulator.start(0);
        return Map.of("quarkus.rest-client.processor.url", simulator.url());
    }

    @Override
    public void stop() {
        simulator.close();
    }
}
