package io.payonce.config;

import io.quarkus.runtime.configuration.DurationConverter;
import io.smallrye.config.SmallRyeConfig;
import io.smallrye.config.SmallRyeConfigBuilder;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
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

    @Test
    void aShortWebhookSecretIsRefused() {
        List<String> problems = ConfigCheck.problems(config(Map.of("payonce.required-in-production.processor-webhook-secret", "whsec_short")));

        assertEquals(1, problems.size(), problems.toString());
        assertTrue(problems.get(0).contains("PAYONCE_PROCESSOR_WEBHOOK_SECRET"));
    }

    @Test
    void aWebhookToleranceOutsideASecondToAnHourIsRefused() {
        assertEquals(1, ConfigCheck.problems(config(Map.of("payonce.processor.webhook-tolerance", "0s"))).size());
        assertEquals(1, ConfigCheck.problems(config(Map.of("payonce.processor.webhook-tolerance", "2h"))).size());
        assertEquals(List.of(), ConfigCheck.problems(config(Map.of("payonce.processor.webhook-tolerance", "1h"))));
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

        IllegalStateException refused = assertThrows(IllegalStateException.class, () -> new ConfigCheck(bad));

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
