package io.payonce.config;

import io.quarkus.runtime.Startup;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.interceptor.Interceptor;
import org.eclipse.microprofile.config.inject.ConfigProperty;
import org.jboss.logging.Logger;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Refuses to start with durations, secrets or broker settings that would break a guarantee; numeric
 * bounds are checked by Bean Validation. It runs before messaging starts, so that the command
 * consumer never declares a queue, or logs in to a node, that the configuration names wrongly.
 */
@Startup(Interceptor.Priority.PLATFORM_BEFORE)
@ApplicationScoped
public class ConfigCheck {

    static final Duration MIN_RETENTION = Duration.ofHours(24);
    static final Duration MAX_RESEND_WITHIN = Duration.ofHours(12);
    static final Duration MAX_WEBHOOK_TOLERANCE = Duration.ofHours(1);
    static final int MIN_WEBHOOK_SECRET_LENGTH = 16;
    static final int MAX_COMMANDS_IN_FLIGHT = 64;
    static final Duration MIN_REQUEUE_AFTER = Duration.ofMillis(100);
    static final Duration MAX_REQUEUE_AFTER = Duration.ofMinutes(1);

    private static final Logger LOG = Logger.getLogger(ConfigCheck.class);

    /** One broker node as {@code rabbitmq-addresses} lists it: a host name or address ([...] for IPv6), and a port. */
    private static final Pattern BROKER_ADDRESS = Pattern.compile("(\\[[0-9A-Fa-f:.]+]|[A-Za-z0-9.-]+):[0-9]{1,5}");

    public ConfigCheck(PayonceConfig config, @ConfigProperty(name = "rabbitmq-addresses") Optional<String> brokerAddresses) {
        List<String> problems = problems(config);
        brokerAddresses.ifPresent(addresses -> problems.addAll(brokerAddressProblems(addresses)));
        if (!problems.isEmpty()) {
            throw new IllegalStateException("Invalid payonce configuration: " + String.join("; ", problems));
        }
        if (config.processor().webhookSecretPrevious().isPresent()) {
            // Said at every start while it lasts: a rotation forgotten half way keeps a retired, perhaps leaked, secret valid.
            LOG.warn("PAYONCE_PROCESSOR_WEBHOOK_SECRET_PREVIOUS is set: webhook deliveries signed with the secret before the "
                    + "current one are accepted; delete it once the processor signs with the current secret only");
        }
    }

    static List<String> problems(PayonceConfig config) {
        List<String> problems = new ArrayList<>();
        if (config.idempotency().retention().compareTo(MIN_RETENTION) < 0) {
            problems.add("payonce.idempotency.retention must be at least 24h so that late retries still replay");
        }
        if (config.outbox().retention().compareTo(MIN_RETENTION) < 0) {
            problems.add("payonce.outbox.retention must be at least 24h so that a sent event can still be traced and sent again");
        }
        requirePositive(problems, "payonce.lock.ttl", config.lock().ttl());
        requirePositive(problems, "payonce.lock.call-bound", config.lock().callBound());
        requirePositive(problems, "payonce.submit-token.ttl", config.submitToken().ttl());
        requirePositive(problems, "payonce.auto-close.delay", config.autoClose().delay());
        requirePositive(problems, "payonce.processor.timeout", config.processor().timeout());
        requirePositive(problems, "payonce.processor.recovery-backoff-max", config.processor().recoveryBackoffMax());
        Duration keyRetention = config.processor().keyRetention();
        Duration resendWithin = config.processor().resendWithin();
        requirePositive(problems, "payonce.processor.key-retention", keyRetention);
        // Capped at 12 h too: the key retention is what the operator says of the processor, and a resend under a key it
        // has forgotten charges the card again.
        Duration mostResendWithin = keyRetention.dividedBy(2).compareTo(MAX_RESEND_WITHIN) < 0 ? keyRetention.dividedBy(2) : MAX_RESEND_WITHIN;
        if (!keyRetention.isNegative() && !keyRetention.isZero() && (resendWithin.isNegative() || resendWithin.compareTo(mostResendWithin) > 0)) {
            problems.add("payonce.processor.resend-within must lie between 0 and half of payonce.processor.key-retention, "
                    + "and at most 12h: a resend under a key the processor has forgotten charges the card again");
        }
        Duration tolerance = config.processor().webhookTolerance();
        if (tolerance.compareTo(Duration.ofSeconds(1)) < 0 || tolerance.compareTo(MAX_WEBHOOK_TOLERANCE) > 0) {
            problems.add("payonce.processor.webhook-tolerance must lie between 1s and 1h: the window in which a signed webhook may be played back");
        }
        String webhookSecret = config.requiredInProduction().processorWebhookSecret();
        checkWebhookSecret(problems, "PAYONCE_PROCESSOR_WEBHOOK_SECRET", webhookSecret);
        config.processor().webhookSecretPrevious().ifPresent(previous -> {
            checkWebhookSecret(problems, "PAYONCE_PROCESSOR_WEBHOOK_SECRET_PREVIOUS", previous);
            if (previous.equals(webhookSecret)) {
                // A rotation half written: the secret being retired is not held at all, and the one set as new may be the old.
                problems.add("PAYONCE_PROCESSOR_WEBHOOK_SECRET_PREVIOUS must differ from PAYONCE_PROCESSOR_WEBHOOK_SECRET: "
                        + "it holds the secret before the current one while the processor's secret is rolled over");
            }
        });
        int inFlight = config.commands().inFlight();
        if (inFlight < 1 || inFlight > MAX_COMMANDS_IN_FLIGHT) {
            // Below 1 the messaging library would quietly run one consumer, never none.
            problems.add("PAYONCE_COMMANDS_IN_FLIGHT (payonce.commands.in-flight) must lie between 1 and " + MAX_COMMANDS_IN_FLIGHT
                    + ": each is a consumer with a broker connection of its own, and each command in hand holds a database connection");
        }
        if (config.commands().queueType().filter(type -> !type.equals("quorum")).isPresent()) {
            problems.add("PAYONCE_COMMANDS_QUEUE_TYPE must be quorum, or unset for classic queues: a classic dead-letter queue "
                    + "was declared without a type, and the broker refuses a queue declared again with another");
        }
        Duration requeueAfter = config.commands().requeueAfter();
        if (requeueAfter.compareTo(MIN_REQUEUE_AFTER) < 0 || requeueAfter.compareTo(MAX_REQUEUE_AFTER) > 0) {
            problems.add("PAYONCE_COMMANDS_REQUEUE_AFTER (payonce.commands.requeue-after) must lie between 100ms and 1m: "
                    + "shorter, commands spin round the queue while a store is down; longer, each waits that long for a store back in seconds");
        }
        if (config.database().statementTimeoutSeconds() <= config.database().lockWaitTimeoutSeconds()) {
            problems.add("payonce.database.statement-timeout-seconds must exceed payonce.database.lock-wait-timeout-seconds, "
                    + "so that a busy row times out as a lock wait");
        }
        return problems;
    }

    /** Names the variable, never the value: these problems stop the start and reach the log. */
    private static void checkWebhookSecret(List<String> problems, String variable, String secret) {
        if (secret.length() < MIN_WEBHOOK_SECRET_LENGTH) {
            problems.add(variable + " must be at least " + MIN_WEBHOOK_SECRET_LENGTH + " characters: the processor's signing secret for its webhooks");
        }
        if (!secret.equals(secret.strip())) {
            // A Secret written from a file or by echo often ends in a line break. Taken as part of the HMAC's
            // key, it would refuse every delivery at run time, and nothing would say why.
            problems.add(variable + " must not begin or end with whitespace (a line break at its end, say): "
                    + "it would be taken as part of the signing key, and every webhook delivery refused");
        }
    }

    /** Every entry of the list is host:port; the value itself is never repeated, since a mistaken entry may be a URI with a password. */
    static List<String> brokerAddressProblems(String addresses) {
        List<String> entries = List.of(addresses.split(",", -1));
        long wrong = entries.stream().filter(entry -> !BROKER_ADDRESS.matcher(entry).matches()).count();
        return wrong == 0 ? List.of() : List.of("PAYONCE_RABBITMQ_ADDRESSES must list host:port entries separated by commas, "
                + "without spaces ([...] around an IPv6 address): " + wrong + " of its " + entries.size() + " entries is not one");
    }

    private static void requirePositive(List<String> problems, String key, Duration value) {
        if (value.isZero() || value.isNegative()) {
            problems.add(key + " must be positive");
        }
    }
}
