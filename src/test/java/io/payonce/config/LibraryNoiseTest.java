package io.payonce.config;

import com.rabbitmq.client.AuthenticationFailureException;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.ConnectException;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which library lines the console drops: those payonce says once itself, or that are false; every other one shows. */
class LibraryNoiseTest {

    private static final String CLIENT = "io.vertx.rabbitmq.impl.RabbitMQClientImpl";
    private static final String CONNECTOR = "io.smallrye.reactive.messaging.rabbitmq";

    private final LibraryNoise noise = new LibraryNoise();

    @Test
    void aConsumerTryThatMeetsWhatThePublisherTellsIsDropped() {
        assertFalse(noise.isLoggable(line(CLIENT, "Could not connect to rabbitmq", new IOException(new ConnectException("Connection refused")))));
        assertFalse(noise.isLoggable(line(CLIENT, "Could not connect to rabbitmq", new AuthenticationFailureException("ACCESS_REFUSED"))));
        assertFalse(noise.isLoggable(line(CLIENT, "Attempting to reconnect to rabbitmq...", null)));
    }

    @Test
    void aConsumerFailureOfItsOwnShows() {
        assertTrue(noise.isLoggable(line(CLIENT, "Could not connect to rabbitmq", new IOException("connection limit of user guest reached"))));
        assertTrue(noise.isLoggable(line(CLIENT, "RabbitMQ connection shutdown! The client will attempt to reconnect automatically", null)));
    }

    @Test
    void onlyTheConnectorsEarlyEstablishedLineIsDropped() {
        assertFalse(noise.isLoggable(line(CONNECTOR, "SRMSG17007: Connection with RabbitMQ broker established for channel `%s`", null)));
        assertTrue(noise.isLoggable(line(CONNECTOR, "SRMSG17000: RabbitMQ Receiver listening address %s", null)));
    }

    @Test
    void onlyTheRedisPoolsDoubleGaugesAreDropped() {
        String redisPool = "This Gauge has been already registered (MeterId{name='redis.pool.queue.size', tags=[tag(pool.name=payonce),tag(pool.type=redis)]})";
        assertFalse(noise.isLoggable(line("io.micrometer.core.instrument.MeterRegistry", redisPool, null)));
        assertTrue(noise.isLoggable(line("io.micrometer.core.instrument.MeterRegistry",
                "This Gauge has been already registered (MeterId{name='payonce.outbox.backlog', tags=[]})", null)));
        assertTrue(noise.isLoggable(line("io.payonce.events.OutboxRelay", redisPool, null)));
    }

    private static LogRecord line(String logger, String message, Throwable thrown) {
        LogRecord record = new LogRecord(Level.INFO, message);
        record.setLoggerName(logger);
        record.setThrown(thrown);
        return record;
    }
}
