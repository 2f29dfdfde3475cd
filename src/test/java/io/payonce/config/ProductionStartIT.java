package io.payonce.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.payonce.support.FreePorts;
import io.payonce.support.Broker;
import io.payonce.support.PackagedInstance;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The packaged application in its production profile: nothing falls back to root, an empty
 * password or loopback. Started with every store variable but one, it stops at once and names
 * the one that is missing. A start that fails always says why in its JSON log, and a start warns
 * of nothing that is not wrong.
 */
class ProductionStartIT {

    private static final Map<String, String> STORES = Map.ofEntries(
            Map.entry("PAYONCE_DB_HOST", "127.0.0.1"),
            Map.entry("PAYONCE_DB_USER", "payonce"),
            Map.entry("PAYONCE_DB_PASSWORD", "not-empty"),
            Map.entry("PAYONCE_REDIS_HOST", "127.0.0.1"),
            Map.entry("PAYONCE_RABBITMQ_HOST", "127.0.0.1"),
            Map.entry("PAYONCE_RABBITMQ_USER", "payonce"),
            Map.entry("PAYONCE_RABBITMQ_PASSWORD", "not-empty"),
            Map.entry("PAYONCE_PROCESSOR_URL", "http://127.0.0.1:1"),
            Map.entry("PAYONCE_PROCESSOR_KEY_NAMESPACE", "production"),
            Map.entry("PAYONCE_PROCESSOR_WEBHOOK_SECRET", "whsec_production_start_test"),
            Map.entry("PAYONCE_PUBLIC_URL", "https://api.example.com/payonce"));

    @ParameterizedTest
    @ValueSource(strings = {"PAYONCE_DB_HOST", "PAYONCE_DB_USER", "PAYONCE_DB_PASSWORD", "PAYONCE_REDIS_HOST", "PAYONCE_RABBITMQ_HOST",
            "PAYONCE_RABBITMQ_USER", "PAYONCE_RABBITMQ_PASSWORD", "PAYONCE_PROCESSOR_URL", "PAYONCE_PROCESSOR_KEY_NAMESPACE",
            "PAYONCE_PROCESSOR_WEBHOOK_SECRET", "PAYONCE_PUBLIC_URL"})
    void aMissingStoreVariableStopsTheStartAndIsNamed(String missing) throws Exception {
        Map<String, String> environment = production();
        environment.remove(missing);

        Result result = start(environment);

        assertNotEquals(0, result.exitCode(), "the start was refused: " + result.output());
        assertTrue(result.output().contains(missing), "the message names " + missing + ":\n" + result.output());
    }

    /**
     * A broker setting named wrongly stops the start before messaging starts: no queue of a wrong type
     * is declared on the broker, to be refused later when the setting is corrected.
     */
    @Test
    void aWrongCommandQueueTypeStopsTheStartBeforeMessaging() throws Exception {
        String commands = Broker.COMMANDS + ".queue-type";
        try (Broker broker = Broker.connect()) {
            AssertionError refused = assertThrows(AssertionError.class, () -> PackagedInstance.start("queue-type", "payonce_queue_type", true,
                    Map.of("PAYONCE_COMMANDS_QUEUE_TYPE", "classic", "PAYONCE_COMMANDS_QUEUE", commands)).close());

            try {
                assertTrue(refused.getMessage().contains("PAYONCE_COMMANDS_QUEUE_TYPE must be quorum"), refused.getMessage());
                assertFalse(broker.exists(commands), "no command queue was declared");
            } finally {
                broker.deleteCommandObjects(commands);
            }
        }
    }

    /**
     * In Kubernetes a start that fails is a crash loop, and the log is all an operator has: each of
     * ten starts against a database port nothing listens on exits non-zero and ends with one plain
     * JSON ERROR line that names the store, its address, the settings and the refusal, each a field
     * of its own too. An asynchronous console lost that line in two starts of three.
     */
    @Test
    void everyStartAgainstAnUnreachableDatabaseLogsWhyItFailed() throws Exception {
        Map<String, String> environment = production();
        int closedPort = FreePorts.next();
        environment.put("PAYONCE_DB_PORT", Integer.toString(closedPort));
        String address = "127.0.0.1:" + closedPort;

        for (int attempt = 1; attempt <= 10; attempt++) {
            Result result = start(environment);

            assertNotEquals(0, result.exitCode(), "start " + attempt + " was refused: " + result.output());
            assertTrue(result.errorLines().stream().anyMatch(line -> line.contains(address) && line.contains("Connection refused")),
                    "start " + attempt + " logged an ERROR line naming " + address + " and the refusal:\n" + result.output());
            List<String> lines = result.output().strip().lines().toList();
            JsonNode last = Result.JSON.readTree(lines.get(lines.size() - 1));
            assertEquals("payonce did not start: the database at " + address + " could not be reached (Connection refused); "
                    + "check PAYONCE_DB_HOST, PAYONCE_DB_PORT", last.path("message").asText(), "start " + attempt + "'s last line");
            assertEquals(Map.of("store", "database", "address", address, "settings", "PAYONCE_DB_HOST, PAYONCE_DB_PORT",
                    "cause", "Connection refused"), Result.JSON.convertValue(last.path("mdc"), Map.class), "its fields");
            assertTrue(last.path("exception").isMissingNode(), "a plain line, the failure's chain left at DEBUG: " + last);
        }
    }

    /**
     * A warning on every start teaches operators to ignore warnings. The Redis client, its pool's
     * gauges and payonce's meters are all set up before the database is first reached, so a start
     * that then stops on the database has shown every warning of that setup.
     */
    @Test
    void aStartRegistersNoMeterTwice() throws Exception {
        Map<String, String> environment = production();
        environment.put("PAYONCE_DB_PORT", Integer.toString(FreePorts.next()));

        Result result = start(environment);

        assertTrue(result.output().contains("\"level\":\"ERROR\""), "the start went as far as the database:\n" + result.output());
        assertFalse(result.output().contains("has been already registered"), "no meter is registered twice:\n" + result.output());
    }

    /** Every variable production requires, and ports of the test's own. */
    private static Map<String, String> production() {
        Map<String, String> environment = new HashMap<>(STORES);
        environment.put("PAYONCE_JWT_PUBLIC_KEY_LOCATION", Path.of("src/test/resources/jwt/publicKey.pem").toAbsolutePath().toString());
        environment.put("PAYONCE_HTTP_PORT", Integer.toString(FreePorts.next()));
        environment.put("PAYONCE_MANAGEMENT_PORT", Integer.toString(FreePorts.next()));
        return environment;
    }

    private record Result(int exitCode, String output) {

        private static final ObjectMapper JSON = new ObjectMapper();

        /** The JSON log lines at ERROR, as written. */
        List<String> errorLines() {
            return output.lines().filter(Result::isError).toList();
        }

        private static boolean isError(String line) {
            if (!line.startsWith("{")) {
                return false;
            }
            try {
                JsonNode entry = JSON.readTree(line);
                return "ERROR".equals(entry.path("level").asText());
            } catch (JsonProcessingException notJson) {
                return false;
            }
        }
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
