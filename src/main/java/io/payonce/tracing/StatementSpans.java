package io.payonce.tracing;

import io.smallrye.config.ConfigSourceContext;
import io.smallrye.config.ConfigSourceFactory;
import io.smallrye.config.ConfigValue;
import io.smallrye.config.PropertiesConfigSource;
import org.eclipse.microprofile.config.spi.ConfigSource;

import java.util.List;
import java.util.Map;

/**
 * No span per SQL statement or Redis command when nothing is exported. {@link SpanExport} already
 * records nothing then, but Quarkus's Vert.x tracers would still open and close a span (one that
 * keeps only its ids) around each of a pay's statements and Redis commands, context and all, for
 * nobody: that was most of what tracing cost with export off. The request's own span stays, since
 * its ids are what log lines, problem bodies and a {@code traceparent} carry. With export on, or
 * when an operator sets {@code quarkus.otel.instrument.vertx-sql-client} or
 * {@code quarkus.otel.instrument.vertx-redis-client} himself (environment and application.properties
 * rank above this source), Quarkus's defaults hold and every statement and command has its span.
 */
public class StatementSpans implements ConfigSourceFactory {

    /** Below application.properties (250) and the environment (300), above Quarkus's defaults. */
    private static final int ORDINAL = 200;

    @Override
    public Iterable<ConfigSource> getConfigSources(ConfigSourceContext context) {
        if (exported(context)) {
            return List.of();
        }
        return List.of(new PropertiesConfigSource(Map.of(
                "quarkus.otel.instrument.vertx-sql-client", "false",
                "quarkus.otel.instrument.vertx-redis-client", "false"),
                "payonce: no statement spans while nothing is exported", ORDINAL));
    }

    /** The same two settings {@link SpanExport}'s beans are looked up by. */
    private static boolean exported(ConfigSourceContext context) {
        return !isNone(context.getValue("payonce.tracing.exporter"))
                || !isNone(context.getValue("payonce-tracing.collector"));
    }

    private static boolean isNone(ConfigValue setting) {
        return setting == null || setting.getValue() == null || "none".equals(setting.getValue());
    }
}
