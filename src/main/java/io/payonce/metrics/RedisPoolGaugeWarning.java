package io.payonce.metrics;

import io.quarkus.logging.LoggingFilter;

import java.util.logging.Filter;
import java.util.logging.LogRecord;

/**
 * Drops one false warning from the console: that the Redis pool's gauges ({@code redis.pool.queue.size}
 * and the others of {@code pool.type=redis}) are registered twice. Quarkus 3.33's Redis extension
 * builds the Vert.x client of each name once for the client beans and once more for the data source
 * beans, keeps the first and drops the second (RedisClientRecorder puts it "if absent"). The dropped
 * client never connects, but its pool registers the same gauges, and Micrometer warns that it ignores
 * them. The gauges exported are those of the client payonce uses; every other double registration
 * still warns.
 */
@LoggingFilter(name = "redis-pool-gauge-warning")
public final class RedisPoolGaugeWarning implements Filter {

    private static final String METER_REGISTRY = "io.micrometer.core.instrument.MeterRegistry";

    @Override
    public boolean isLoggable(LogRecord record) {
        String message = record.getMessage();
        return !(METER_REGISTRY.equals(record.getLoggerName())
                && message != null
                && message.contains("has been already registered")
                && message.contains("name='redis.pool.")
                && message.contains("tag(pool.type=redis)"));
    }
}
