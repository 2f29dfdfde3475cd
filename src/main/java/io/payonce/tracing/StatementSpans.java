package io.payonce.tracing;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.PropertiesConfigSource;
import org.eclipse.microprofile.config.spi.ConfigSource;

import java.util.List;
import java.util.Map;

/**
 * A span per SQL statement and Redis command only when spans are exported. {@link SpanExport}
 * already records nothing when nothing is exported, but Quarkus's Vert.x tracers would still open and
 * close a span (one that keeps only its ids) around each of a pay's statements and Redis commands,
 * context and all, for nobody: that was most of what tracing cost with export off. The request's own
 * span stays, since its ids are what log lines, problem bodies and a {@code traceparent} carry.
 *
 * <p>The source always names both settings, {@code true} with export on and {@code false} with it
 * off: the build runs this factory too and records what it found among the values the packaged
 * application starts from, so a source that said nothing with export on would leave the build's
 * {@code false} in place for an instance whose export was switched on at run time. An operator's own
 * {@code quarkus.otel.instrument.vertx-sql-client} or {@code quarkus.otel.instrument.vertx-redis-client}
 * (environment, application.properties) ranks above this source and wins.
 *
 * <p>A factory reads the ordinary sources only (the environment, application.properties, system
 * properties), not those other factories add: export switched on in a file named by
 * {@code quarkus.config.locations} is not seen here, and whoever does that sets the two settings in the
 * same file (docs/operations/observability.md).
 */
public class StatementSpans implements ConfigSourceFactory {

    /** Below application.properties (250) and the environment (300), above the build's values (0). */
    private static final int ORDINAL = 200;

    @Override
    public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
        String exported = String.valueOf(exported(context));
        return List.of(new PropertiesConfigSource(Map.of(
                "quarkus.otel.instrument.vertx-sql-client", exported,
                "quarkus.otel.instrument.vertx-redis-client", exported),
                "payonce: statement spans only while spans are exported", ORDINAL));
    }

    /** The same two settings {@link SpanExport}'s beans are looked up by. */
    private static boolean exported(ConfigSourceContext context) {
        return !isNone(context.getValue(SpanExport.EXPORTER)) || !isNone(context.getValue(SpanExport.COLLECTOR));
    }

    private static boolean isNone(ConfigValue setting) {
        return setting == null || setting.getValue() == null || SpanExport.NONE.equals(setting.getValue());
    }
}
