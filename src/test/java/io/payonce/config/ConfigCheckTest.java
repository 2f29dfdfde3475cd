package io.payonce.config;

import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConfigCheckTest {

    @Test
    void theDefaultsPass() {
        assertEquals(List.of(), ConfigCheck.problems(config(Map.of())));
    }

    @Test
    void aRetentionShorterThanADayIsRefused() {
        List<String> problems = ConfigCheck.problems(config(Map.of("payonce.idempotency.retention", "23h")));

        assertEquals(1, problems.size());
        assertTrue(problems.get(0).contains("payonce.idempotency.retention"));
    }

    @Test
    void anOutboxRetentionShorterThanADayIsRefused() {
        List<String> problems = ConfigCheck.problems(config(Map.of("payonce.outbox.retention", "12h")));

        assertEquals(1, problems.size());
        assertTrue(problems.get(0).contains("payonce.outbox.retention"));
    }

    @Test
    void zeroOrNegativeDurationsAreRefused() {
        List<String> problems = ConfigCheck.problems(config(Map.of(
                "payonce.lock.ttl", "0s",
                "payonce.submit-token.ttl", "-1s",
                "payonce.auto-close.delay", "0s")));

        assertEquals(3, problems.size(), problems.toString());
    }

    /** Quorum, or nothing: a classic dead-letter queue was declared without a type, and "classic" now would be refused by the broker. */
    @Test
    void aCommandQueueTypeOtherThanQuorumIsRefused() {
        assertEquals(List.of(), ConfigCheck.problems(config(Map.of("payonce.commands.queue-type", "quorum"))));
        for (String type : List.of("classic", "stream", "Quorum")) {
            List<String> problems = ConfigCheck.problems(config(Map.of("payonce.commands.queue-type", type)));

            assertEquals(1, problems.size(), type + ": " + problems);
            assertTrue(problems.get(0).contains("PAYONCE_COMMANDS_QUEUE_TYPE"), problems.get(0));
        }
    }

    @Test
    void brokerAddressesAreHostAndPortEachAndTheirValueIsNeverRepeated() {
        assertEquals(List.of(), ConfigCheck.brokerAddressProblems("rabbit-0.rabbit:5672,10.0.0.7:5672,[fd00::7]:5671"));
        for (String addresses : List.of(",rabbit-1:5672", "rabbit-0:5672,,rabbit-1:5672", "rabbit-0:5672, rabbit-1:5672", "rabbit-0",
                "rabbit-0:5672\n", "amqp://payonce:s3cret@rabbit-0:5672")) {
            List<String> problems = ConfigCheck.brokerAddressProblems(addresses);

            assertEquals(1, problems.size(), addresses);
            assertTrue(problems.get(0).contains("PAYONCE_RABBITMQ_ADDRESSES") && !problems.get(0).contains("s3cret"), problems.get(0));
        }
    }

    @Test
    void aShortWebhookSecretIsRefused() {
        List<String> problems = ConfigCheck.problems(config(Map.of("payonce.required-in-production.processor-webhook-secret", "whsec_short")));

        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("PAYONCE_PROCESSOR_WEBHOOK_SECRET"));
    }

    /**
     * A Secret written from a file or by echo ends in a line break: taken as part of the key, it would
     * refuse every delivery. The start stops instead, naming the variable and never its value.
     */
    @Test
    void aWebhookSecretWithSurroundingWhitespaceStopsTheStartWithoutShowingIt() {
        for (String secret : List.of("whsec_written_with_echo\n", "whsec_written_on_windows\r\n", " whsec_pasted_with_a_space")) {
            PayonceConfig config = config(Map.of("payonce.required-in-production.processor-webhook-secret", secret));

            List<String> problems = ConfigCheck.problems(config);
            IllegalStateException refused = assertThrows(IllegalStateException.class, () -> new ConfigCheck(config, Optional.empty()));

            assertEquals(1, problems.size(), problems.toString());
            assertTrue(problems.get(0).contains("PAYONCE_PROCESSOR_WEBHOOK_SECRET must not begin or end with whitespace"), problems.get(0));
            assertFalse(refused.getMessage().contains(secret.strip()), "the secret is shown: " + refused.getMessage());
        }
    }

    /** The secret before the current one, held during a rotation, is checked as the current one is. */
    @Test
    void aPreviousWebhookSecretIsCheckedAsTheCurrentOne() {
        for (String refused : List.of("whsec_short", "whsec_the_one_before_this\n")) {
            List<String> problems = ConfigCheck.problems(config(Map.of("payonce.processor.webhook-secret-previous", refused)));
            assertEquals(1, problems.size(), problems.toString());
            assertTrue(problems.get(0).startsWith("PAYONCE_PROCESSOR_WEBHOOK_SECRET_PREVIOUS "), problems.get(0));
            assertFalse(problems.get(0).contains(refused.strip()), "the secret is shown: " + problems.get(0));
        }
        assertEquals(List.of(), ConfigCheck.problems(config(Map.of("payonce.processor.webhook-secret-previous", "whsec_the_one_before_this"))));
    }

    /** A previous secret equal to the current one is a rotation half written: the secret being retired is not held. */
    @Test
    void aPreviousWebhookSecretEqualToTheCurrentOneIsRefused() {
        String current = "whsec_the_current_one";
        List<String> problems = ConfigCheck.problems(config(Map.of(
                "payonce.required-in-production.processor-webhook-secret", current, "payonce.processor.webhook-secret-previous", current)));

        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.get(0).startsWith("PAYONCE_PROCESSOR_WEBHOOK_SECRET_PREVIOUS must differ"), problems.get(0));
        assertFalse(problems.get(0).contains(current), "the secret is shown: " + problems.get(0));
    }

    @Test
    void aWebhookToleranceOutsideASecondToAnHourIsRefused() {
        assertEquals(1, ConfigCheck.problems(config(Map.of("payonce.processor.webhook-tolerance", "0s"))).size());
        assertEquals(1, ConfigCheck.problems(config(Map.of("payonce.processor.webhook-tolerance", "2h"))).size());
        assertEquals(List.of(), ConfigCheck.problems(config(Map.of("payonce.processor.webhook-tolerance", "1h"))));
    }

    @Test
    void aResendWindowPastHalfTheProcessorsKeyRetentionIsRefused() {
        List<String> problems = ConfigCheck.problems(config(Map.of("payonce.processor.resend-within", "13h")));
        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.get(0).startsWith("payonce.processor.resend-within must lie between 0 and half"), problems.get(0));
        assertEquals(1, ConfigCheck.problems(config(Map.of("payonce.processor.key-retention", "1h"))).size(),
                "a processor that forgets keys after an hour shrinks the window the default fits in");
        assertEquals(List.of(), ConfigCheck.problems(config(Map.of("payonce.processor.resend-within", "12h"))));
        assertEquals(List.of(), ConfigCheck.problems(config(Map.of("payonce.processor.key-retention", "2h"))));
        assertEquals(1, ConfigCheck.problems(config(Map.of("payonce.processor.key-retention", "48h", "payonce.processor.resend-within", "20h")))
                .size(), "a longer retention said of the processor does not stretch the window past 12h");
        assertEquals(1, ConfigCheck.problems(config(Map.of("payonce.processor.key-retention", "0s"))).size());
    }

    @Test
    void commandsInFlightOutsideOneToSixtyFourAreRefused() {
        for (String refused : List.of("0", "-1", "65")) {
            List<String> problems = ConfigCheck.problems(config(Map.of("payonce.commands.in-flight", refused)));
            assertEquals(1, problems.size(), refused + ": " + problems);
            assertTrue(problems.get(0).contains("PAYONCE_COMMANDS_IN_FLIGHT"), problems.get(0));
        }
        assertEquals(List.of(), ConfigCheck.problems(config(Map.of("payonce.commands.in-flight", "1"))));
        assertEquals(List.of(), ConfigCheck.problems(config(Map.of("payonce.commands.in-flight", "64"))));
    }

    @Test
    void aRequeuePauseOutsideATenthOfASecondToAMinuteIsRefused() {
        for (String refused : List.of("0s", "99ms", "-1s", "61s")) {
            List<String> problems = ConfigCheck.problems(config(Map.of("payonce.commands.requeue-after", refused)));
            assertEquals(1, problems.size(), refused + ": " + problems);
            assertTrue(problems.get(0).contains("PAYONCE_COMMANDS_REQUEUE_AFTER"), problems.get(0));
        }
        assertEquals(List.of(), ConfigCheck.problems(config(Map.of("payonce.commands.requeue-after", "100ms"))));
        assertEquals(List.of(), ConfigCheck.problems(config(Map.of("payonce.commands.requeue-after", "1m"))));
    }

    @Test
    void theServiceRefusesToStartWithABadSetting() {
        PayonceConfig bad = config(Map.of("payonce.lock.ttl", "0s"));

        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> new ConfigCheck(bad, Optional.empty()));

        assertTrue(refused.getMessage().contains("payonce.lock.ttl"));
    }

    private static PayonceConfig config(Map<String, String> values) {
        SmallRyeConfig config = new SmallRyeConfigBuilder()
                .withMapping(PayonceConfig.class)
                .withConverter(Duration.class, 100, new DurationConverter())
                .withDefaultValues(Map.of(
                        "payonce.required-in-production.db-host", "db.example",
                        "payonce.required-in-production.db-user", "payonce",
                        "payonce.required-in-production.db-password", "secret",
                        "payonce.required-in-production.redis-host", "redis.example",
                        "payonce.required-in-production.rabbitmq-host", "rabbitmq.example",
                        "payonce.required-in-production.rabbitmq-user", "payonce",
                        "payonce.required-in-production.rabbitmq-password", "secret",
                        "payonce.required-in-production.processor-url", "https://processor.example",
                        "payonce.required-in-production.processor-webhook-secret", "whsec_0123456789abcdef",
                        "payonce.public-url", "https://api.example.com/payonce"))
                .withDefaultValues(Map.of(
                        "payonce.required-in-production.processor-key-namespace", "production",
                        "payonce.processor.key-namespace", "production"))
                .withDefaultValues(values)
                .build();
        return config.getConfigMapping(PayonceConfig.class);
    }
}
