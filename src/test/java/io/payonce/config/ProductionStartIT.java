package io.payonce.config;

import io.payonce.support.FreePorts;
import io.payonce.support.PackagedInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packaged application in its production profile: nothing falls back to root, an empty
 * password or loopback. Started with every store variable but one, it stops at once and names
 * the one that is missing.
 */
class ProductionStartIT {

    private static final Map<String, String> STORES = Map.of(
            "PAYONCE_DB_HOST", "127.0.0.1",
            "PAYONCE_DB_USER", "payonce",
            "PAYONCE_DB_PASSWORD", "not-empty",
            "PAYONCE_REDIS_HOST", "127.0.0.1",
            "PAYONCE_RABBITMQ_HOST", "127.0.0.1",
            "PAYONCE_RABBITMQ_USER", "payonce",
            "PAYONCE_RABBITMQ_PASSWORD", "not-empty",
            "PAYONCE_PROCESSOR_URL", "http://127.0.0.1:1",
            "PAYONCE_PUBLIC_URL", "https://api.example.com/payonce");

    @ParameterizedTest
    @ValueSource(strings = {"PAYONCE_DB_HOST", "PAYONCE_DB_USER", "PAYONCE_DB_PASSWORD", "PAYONCE_REDIS_HOST", "PAYONCE_RABBITMQ_HOST",
            "PAYONCE_RABBITMQ_USER", "PAYONCE_RABBITMQ_PASSWORD", "PAYONCE_PROCESSOR_URL", "PAYONCE_PUBLIC_URL"})
    void aMissingStoreVariableStopsTheStartAndIsNamed(String missing) throws Exception {
        Map<String, String> environment = new HashMap<>(STORES);
        environment.remove(missing);
        environment.put("PAYONCE_JWT_PUBLIC_KEY_LOCATION", Path.of("src/test/resources/jwt/publicKey.pem").toAbsolutePath().toString());
        environment.put("PAYONCE_HTTP_PORT", Integer.toString(FreePorts.next()));
        environment.put("PAYONCE_MANAGEMENT_PORT", Integer.toString(FreePorts.next()));

        Result result = start(environment);

        assertNotEquals(0, result.exitCode(), "the start was refused: " + result.output());
        assertTrue(result.output().contains(missing), "the message names " + missing + ":\n" + result.output());
    }

    private record Result(int exitCode, String output) {
    }

    /** The native executable when the build made one, the JVM jar otherwise; a clean environment either way. */
    private static Result start(Map<String, String> environment) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(PackagedInstance.command(List.of())).redirectErrorStream(true);
        builder.environment().clear();
        builder.environment().put("PATH", System.getenv("PATH"));
        builder.environment().putAll(environment);
        Process process = builder.start();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            return new Result(0, "still running after 60 s: the start was not refused");
        }
        return new Result(process.exitValue(), new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }
}
