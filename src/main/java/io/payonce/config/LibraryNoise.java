package io.payonce.config;

import io.payonce.broker.BrokerReachability;
import io.quarkus.logging.LoggingFilter;

import java.util.logging.Filter;
import java.util.logging.LogRecord;

/**
 * Drops from the console the lines of libraries that are false, or that payonce says once where they
 * say it again and again; every other line of theirs is kept.
 *
 * <ul>
 * <li>That the Redis pool's gauges ({@code redis.pool.queue.size} and the others of
 * {@code pool.type=redis}) are registered twice. Quarkus 3.33's Redis extension builds the Vert.x
 * client of each name once for the client beans and once more for the data source beans, keeps the
 * first and drops the second (RedisClientRecorder puts it "if absent"). The dropped client never
 * connects, but its pool registers the same gauges, and Micrometer warns that it ignores them. The
 * gauges exported are those of the client payonce uses; every other double registration still warns.
 * <li>That the command consumer's connection with RabbitMQ is "established" (SRMSG17007): the
 * connector says it as each of its clients starts, before it has tried to connect, so a start with
 * the broker away said it once per consumer.
 * <li>The RabbitMQ client's "Attempting to reconnect", and its "Could not connect to rabbitmq", with
 * a stack trace, where the cause is one payonce's publisher meets too and tells once, naming the
 * settings to check ({@code io.payonce.broker.BrokerReachability}): an address that cannot be reached,
 * or a login refused. Each consumer connection says them at every try while the broker is away:
 * dozens of lines a minute. A failure of the consumers' own (a connection limit, say) still shows.
 * </ul>
 */
@LoggingFilter(name = "library-noise")
public final class LibraryNoise implements Filter {

    private static final String METER_REGISTRY = "io.micrometer.core.instrument.MeterRegistry";
    private static final String RABBITMQ_CONNECTOR = "io.smallrye.reactive.messaging.rabbitmq";
    private static final String RABBITMQ_CLIENT = "io.vertx.rabbitmq.impl.RabbitMQClientImpl";

    @Override
    public boolean isLoggable(LogRecord record) {
        String message = record.getMessage();
        if (message == null || record.getLoggerName() == null) {
            return true;
        }
        return switch (record.getLoggerName()) {
            case METER_REGISTRY -> !(message.contains("has been already registered")
                    && message.contains("name='redis.pool.")
                    && message.contains("tag(pool.type=redis)"));
            case RABBITMQ_CONNECTOR -> !message.startsWith("SRMSG17007");
            case RABBITMQ_CLIENT -> !(message.startsWith("Attempting to reconnect to rabbitmq")
                    || message.startsWith("Could not connect to rabbitmq") && BrokerReachability.toldOnce(record.getThrown()));
            default -> true;
        };
    }
}
