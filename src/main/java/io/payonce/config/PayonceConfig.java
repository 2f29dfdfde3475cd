package io.payonce.config;

import io.smallrye.config.ConfigMapping;
import io.smallrye.config.WithDefault;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.Pattern;
import jakarta.validation.constraints.Positive;

import java.time.Duration;
import java.util.Optional;
import java.util.Set;

/**
 * Every payonce setting, under the {@code payonce.} prefix. Checked at start: a setting outside its
 * bounds stops the service instead of weakening a guarantee at run time.
 */
@ConfigMapping(prefix = "payonce")
public interface PayonceConfig {

    /** The Redis lock that keeps two instances from paying one order at the same moment. */
    Lock lock();

    /** One-time submit tokens that absorb double-clicks on the order form. */
    SubmitToken submitToken();

    /** Idempotency-Key records. */
    Idempotency idempotency();

    /** Closing orders that were never paid. */
    AutoClose autoClose();

    /** Session settings of every database connection. */
    Database database();

    /** The events of money movements, written with them and published after COMMIT. */
    Outbox outbox();

    /** Pay and refund commands by message. */
    Commands commands();

    /** Bearer tokens already verified, remembered for their next requests. */
    VerifiedTokens verifiedTokens();

    /** Where the spans of traced requests go. */
    Tracing tracing();

    /** The card processor that card payments are charged through. */
    Processor processor();

    /**
     * The store settings production must name, each from its environment variable: checked when the
     * configuration is read, before anything connects, so that a missing one stops the start with the
     * variable's name instead of falling back to root, an empty password or loopback. Dev mode and
     * tests give local defaults. The datasource and Redis client read the values from here.
     */
    RequiredInProduction requiredInProduction();

    /** The largest amount, in minor units, that one order may carry. */
    @WithDefault("100000000")
    @Positive
    long maxAmount();

    /** The most header bytes a request may carry; more is refused with 431 before anything reads them. */
    @WithDefault("16384")
    @Min(1024)
    long maxHeaderBytes();

    /**
     * Where clients reach payonce, as the gateway publishes it (PAYONCE_PUBLIC_URL): every problem's
     * type is an absolute URI under it (io.payonce.api.ProblemTypeUris). Required in production.
     */
    String publicUrl();

    interface Lock {
        /** How long a pay lock lives if its holder never releases it; must be positive. */
        @WithDefault("5s")
        Duration ttl();

        /**
         * The longest a pay waits for one Redis call of the lock before it goes on without the lock
         * (the database alone keeps it single): what a slow Redis may add to a payment. A Redis
         * Cluster reached across zones may need more than one node on the same network.
         */
        @WithDefault("250ms")
        Duration callBound();
    }

    interface SubmitToken {
        /** How long an issued submit token may wait for its form to be submitted. */
        @WithDefault("10m")
        Duration ttl();
    }

    interface Idempotency {
        /** How long a key's stored answer is kept; at least 24 hours, far beyond any client's retry window. */
        @WithDefault("7d")
        Duration retention();

        /** How often expired idempotency records are deleted. */
        @WithDefault("1h")
        String cleanupEvery();

        /** Rows deleted per statement by the cleanup, so that no delete holds locks for long. */
        @WithDefault("500")
        @Min(1)
        @Max(10_000)
        int cleanupBatchSize();
    }

    interface VerifiedTokens {
        /** How many verified tokens an instance remembers; 0 verifies every request's token afresh. */
        @WithDefault("10000")
        @Min(0)
        @Max(1_000_000)
        int maxEntries();

        /**
         * The longest a verified token is remembered, whatever its expiry: the bound on how long a
         * token keeps working here after the key that signed it is replaced. Never past the token's
         * own expiry or maximum age.
         */
        @WithDefault("60s")
        Duration maxStay();
    }

    interface AutoClose {
        /** An order UNPAID for longer than this, since its creation or since a card payment gave it back, is closed. */
        @WithDefault("30m")
        Duration delay();

        /** How often stale orders are looked for; {@code off} disables the job on this instance. */
        @WithDefault("1m")
        String every();

        /** Orders closed per statement, so that no update holds locks for long. */
        @WithDefault("200")
        @Min(1)
        @Max(10_000)
        int batchSize();
    }

    interface RequiredInProduction {
        /** PAYONCE_DB_HOST. */
        String dbHost();

        /** PAYONCE_DB_USER. */
        String dbUser();

        /** PAYONCE_DB_PASSWORD: present in production; the datasource reads the password itself. */
        String dbPassword();

        /** PAYONCE_REDIS_HOST. */
        String redisHost();

        /** PAYONCE_RABBITMQ_HOST. */
        String rabbitmqHost();

        /** PAYONCE_RABBITMQ_USER. */
        String rabbitmqUser();

        /** PAYONCE_RABBITMQ_PASSWORD: present in production; the broker connection reads it itself. */
        String rabbitmqPassword();

        /** PAYONCE_PROCESSOR_URL: the card processor's API; the REST client reads it from here. */
        String processorUrl();

        /** PAYONCE_PROCESSOR_KEY_NAMESPACE: payonce.processor.key-namespace reads it from here. */
        String processorKeyNamespace();

        /**
         * PAYONCE_PROCESSOR_WEBHOOK_SECRET: the secret the processor signs its webhook events with
         * (HMAC-SHA256); an event whose signature it does not verify is refused. At least 16 characters.
         */
        String processorWebhookSecret();
    }

    interface Commands {
        /**
         * The broker users (the AMQP user-id, which the broker checks against the connection's
         * login) that may send pay commands from a balance: services trusted to pay for the users they name.
         * None by default in production: a command from anyone else is dead-lettered.
         */
        Optional<Set<String>> paySenders();

        /**
         * The broker users that may send card pay commands ({@code "method":"card"}): each names a user
         * and a card token and is charged to that card, so a service trusted to pay from balances is
         * not by that alone trusted to charge cards. None by default in production.
         */
        Optional<Set<String>> cardPaySenders();

        /** The broker users that may send refund commands, as ops may by HTTP; none by default in production. */
        Optional<Set<String>> refundSenders();

        /**
         * {@code quorum} when the command queue and its dead-letter queue are quorum queues
         * ({@code PAYONCE_COMMANDS_QUEUE_TYPE}); unset for classic ones, whose dead-letter queue was
         * declared without a type and would refuse one named now.
         */
        Optional<String> queueType();

        /**
         * How many commands one instance handles at once ({@code PAYONCE_COMMANDS_IN_FLIGHT}): the
         * command channel's copies read it, each a consumer of the queue on a broker connection of
         * its own with one command in hand. Bounded ({@link ConfigCheck}), since each copy costs a
         * connection and a few threads, and each command in hand a database connection.
         */
        @WithDefault("8")
        int inFlight();

        /**
         * How long a command that must wait (a store down, a balance pay's twin in flight, its first
         * delivery told to come back later) stays away before it goes back to the queue
         * ({@code PAYONCE_COMMANDS_REQUEUE_AFTER}): the pace at which commands go round the queue
         * while a store is down. Bounded ({@link ConfigCheck}): at zero they would spin.
         */
        @WithDefault("1s")
        Duration requeueAfter();
    }

    interface Outbox {
        /** The durable topic exchange the events go to, routed by event type; payonce declares it. */
        @WithDefault("payonce.events")
        String exchange();

        /** How often each instance publishes unsent events; {@code off} disables the relay on this instance. */
        @WithDefault("1s")
        String relayEvery();

        /** Events locked and published per transaction, and sent events deleted per relay run. */
        @WithDefault("100")
        @Min(1)
        @Max(1000)
        int batchSize();

        /** How long a sent event is kept, for audit and for re-publishing by hand; at least 24 hours. */
        @WithDefault("7d")
        Duration retention();

        /**
         * How many times the broker may refuse an event published alone (closing the channel on it, 406:
         * a message over its size limit; a nack is no refusal) before the relay parks it and lets the
         * events behind it go on; one try per relay run.
         */
        @WithDefault("10")
        @Min(1)
        int parkAfterRefusals();
    }

    interface Database {
        /**
         * Seconds a statement waits for a row lock before failing with 1205; the transaction is then
         * retried with the same command and key. Short, because a healthy payment holds locks for milliseconds.
         */
        @WithDefault("3")
        @Min(1)
        @Max(60)
        int lockWaitTimeoutSeconds();

        /**
         * Seconds any one statement may run, lock waits included, before the server stops it; longer
         * than the lock wait, so that a row lock still times out as a lock wait first.
         */
        @WithDefault("5")
        @Min(2)
        @Max(600)
        int statementTimeoutSeconds();

        /**
         * Seconds a transaction may sit idle before the server closes its connection and rolls it
         * back: the bound on how long a stalled instance (paused, frozen, cut off) can hold a claim
         * and an order row, during which its key answers 409 and other keys on that order wait.
         */
        @WithDefault("5")
        @Min(1)
        @Max(600)
        int idleTransactionTimeoutSeconds();

        /**
         * Confirms that every time stored in the database is UTC (a new database, or one converted as
         * UPGRADING.md's "Times as instants in UTC" says). Needed only where the server's own time zone
         * is not UTC: payonce refuses to start there without it (io.payonce.db.ServerTimeZoneCheck).
         */
        @WithDefault("false")
        boolean timesStoredInUtc();

        /**
         * Whether payonce refuses to start on a database server that shows a commit to other sessions
         * before the commit is durable (io.payonce.db.DurableCommitsCheck). Off, it starts and warns:
         * for dev mode and tests on a server without a binary log, never where the money is real.
         */
        @WithDefault("true")
        boolean durableCommitsRequired();

        /**
         * Whether a first balance pay sends its transaction's statements pipelined, in a few round
         * trips (io.payonce.db.PipelinedTransactions), on a second pool of as many connections as the
         * first. Off, every pay runs one statement at a time, as it does behind a proxy that cannot
         * pipeline or where the database cannot give each instance twice its pool's connections.
         */
        @WithDefault("true")
        boolean pipelinedPay();

        /**
         * On a MariaDB Galera cluster, which statements first wait until their node has applied every
         * write set the cluster committed before them ({@code wsrep_sync_wait}, a bit mask: 1 reads
         * and BEGIN, 2 updates and deletes, 4 inserts). 1, the default, lets no read miss a commit
         * made on another node, as one that lands on a new writer right after a failover would: the
         * order a client has just created must not be a 404 there. Writes need no wait: one that met
         * a commit not yet applied fails certification (1213) and runs again. 0 saves the wait where
         * every instance always writes through one node. Without Galera the setting does nothing.
         */
        @WithDefault("1")
        @Min(0)
        @Max(15)
        int syncWait();
    }

    interface Processor {
        /**
         * How long payonce waits for the processor's answer to one call. Past it the call is given
         * up and never retried by itself: the payment becomes UNKNOWN and the recovery job asks the
         * processor what became of it.
         */
        @WithDefault("10s")
        Duration timeout();

        /** The processor's secret API key, sent as a bearer token on every call; none when the processor needs none. */
        Optional<String> apiKey();

        /**
         * This environment's part of every key payonce sends the processor (io.payonce.processor.ProcessorKeys):
         * unique to each environment that shares a processor account, and to each database that begins
         * empty (its order ids start over); kept across a restore or a failover of the same database, so
         * that a retry after either meets the processor's first charge. Required in production.
         */
        @Pattern(regexp = "[A-Za-z0-9._:-]{1,64}")
        String keyNamespace();

        /**
         * How long after its first send a charge the processor cannot find may be sent again under its
         * key. Must stay well inside {@link #keyRetention}: past that, a resend under a key the
         * processor forgot would charge again.
         */
        @WithDefault("1h")
        Duration resendWithin();

        /**
         * How long the processor remembers an idempotency key (24 hours at the well-known ones). Past
         * it, an empty key says nothing of a charge made under it: the resend window must end well
         * before it ({@link ConfigCheck}), and an operator's "not charged" rests on the processor's
         * list of the order's charges alone.
         */
        @WithDefault("24h")
        Duration keyRetention();

        /** How often each instance looks for card payments nobody is working on; {@code off} disables the job here. */
        @WithDefault("2s")
        String recoveryEvery();

        /** The longest the recovery job waits before asking again about a payment whose outcome is still unknown. */
        @WithDefault("30s")
        Duration recoveryBackoffMax();

        /** Payments taken per run of the recovery job. */
        @WithDefault("20")
        @Min(1)
        @Max(1000)
        int recoveryBatchSize();

        /**
         * How far a webhook event's signed timestamp may lie from this instance's clock, either way: an
         * older signature is refused as stale, so a recorded delivery cannot be played back later.
         * Between 1 s and 1 h; the processor's clock and payonce's must agree within it.
         */
        @WithDefault("5m")
        Duration webhookTolerance();

        /**
         * PAYONCE_PROCESSOR_WEBHOOK_SECRET_PREVIOUS: while the processor's webhook secret is rolled
         * over, the secret before the current one, whose signatures verify beside the current one's,
         * so that the processor may switch to the new secret at any moment of the rollout. None
         * outside a rotation. Checked as the current one ({@link ConfigCheck}).
         */
        Optional<String> webhookSecretPrevious();
    }

    interface Tracing {
        /**
         * {@code otlp}: Quarkus's OTLP exporter sends spans to {@code quarkus.otel.exporter.otlp.traces.endpoint}
         * (or the general endpoint); {@code none}: spans end in the instance (trace ids still reach logs and
         * problem bodies) unless {@code QUARKUS_OTEL_EXPORTER_OTLP_ENDPOINT} or its traces variant names a
         * collector, which switches export on by itself (io.payonce.tracing.SpanExport).
         */
        @WithDefault("none")
        @Pattern(regexp = "none|otlp")
        String exporter();
    }
}
