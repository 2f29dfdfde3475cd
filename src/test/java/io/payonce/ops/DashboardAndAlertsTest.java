package io.payonce.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.payonce.support.Api;
import io.payonce.support.Management;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Grafana dashboard and the Prometheus alert rules under src/main/observability query only
 * metrics that payonce exposes: after a pay and its replay, every metric an expression names is in
 * /q/metrics. A renamed metric or a typo fails here instead of as an empty panel or a silent alert.
 */
@QuarkusTest
class DashboardAndAlertsTest {

    private static final Path OBSERVABILITY = Path.of("src/main/observability");
    private static final Pattern IDENTIFIER = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    /** PromQL's own words: functions, aggregations and their modifiers. */
    private static final Set<String> PROMQL = Set.of("sum", "min", "max", "avg", "count", "rate", "irate", "increase",
            "histogram_quantile", "by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless",
            "offset", "bool", "abs", "clamp_min", "clamp_max");

    @Test
    void everyMetricTheDashboardQueriesIsExposedAfterAPay() throws IOException {
        JsonNode dashboard = new ObjectMapper().readTree(OBSERVABILITY.resolve("grafana-dashboard.json").toFile());
        List<String> expressions = new ArrayList<>();
        dashboard.get("panels").forEach(panel -> panel.get("targets").forEach(target -> expressions.add(target.get("expr").asText())));

        assertTrue(expressions.size() >= 8, "the dashboard has its panels: " + expressions);
        assertEquals(Set.of(), unexposed(expressions));
    }

    @Test
    void everyMetricAnAlertWatchesIsExposedAfterAPay() throws IOException {
        List<String> expressions = Files.readAllLines(OBSERVABILITY.resolve("prometheus-alerts.yml")).stream()
                .map(String::trim)
                .filter(line -> line.startsWith("expr:"))
                .map(line -> line.substring("expr:".length()).trim())
                .toList();

        assertTrue(expressions.size() >= 7, "the rules have their alerts: " + expressions);
        assertEquals(Set.of(), unexposed(expressions));
    }

    @Test
    void theCheckFindsAMetricThatIsNotThere() {
        assertEquals(Set.of("payonce_no_such_metric_total"), unexposed(List.of("sum(rate(payonce_no_such_metric_total[5m]))")));
    }

    /** The metrics the expressions name that /q/metrics does not expose, after a pay and its replay. */
    private static Set<String> unexposed(List<String> expressions) {
        payAndReplay();
        Set<String> exposed = Management.metrics().lines()
                .filter(line -> !line.startsWith("#") && !line.isBlank())
                .map(line -> line.split("[{ ]", 2)[0])
                .collect(Collectors.toSet());
        assertFalse(exposed.isEmpty());
        Set<String> missing = new TreeSet<>();
        for (String expression : expressions) {
            for (String metric : metricsIn(expression)) {
                if (!exposed.contains(metric)) {
                    missing.add(metric);
                }
            }
        }
        return missing;
    }

    /** The metric names of a PromQL expression: what is left without strings, label matchers, ranges and PromQL's words. */
    static Set<String> metricsIn(String expression) {
        String bare = expression.replaceAll("\"[^\"]*\"", "")
                .replaceAll("\\{[^}]*}", "")
                .replaceAll("\\[[^]]*]", "")
                .replaceAll("\\b(by|without|on|ignoring)\\s*\\([^)]*\\)", "");
        Set<String> metrics = new TreeSet<>();
        Matcher identifiers = IDENTIFIER.matcher(bare);
        while (identifiers.find()) {
            String word = identifiers.group();
            if (!PROMQL.contains(word)) {
                metrics.add(word);
            }
        }
        return metrics;
    }

    private static void payAndReplay() {
        String userId = "dash-" + UUID.randomUUID();
        Api.fundedAccount(userId, 1000);
        String bearer = Tokens.user(userId);
        long order = Api.newOrder(bearer, 100);
        String key = Api.newKey();
        assertEquals(201, Api.pay(bearer, order, key).statusCode());
        assertEquals("true", Api.pay(bearer, order, key).header("Idempotent-Replayed"));
    }
}
