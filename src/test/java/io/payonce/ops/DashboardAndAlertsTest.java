package io.payonce.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.payonce.support.Api;
import io.payonce.support.Management;
import io.payonce.support.Tokens;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Grafana dashboard and the Prometheus alert rules under src/main/observability query only
 * metrics that payonce exposes: after a pay and its replay, every metric an expression names is in
 * /q/metrics, and every label an expression matches on or groups by is carried by one of its metrics.
 * A renamed metric or label, or a typo, fails here instead of as an empty panel or a silent alert.
 */
@QuarkusTest
class DashboardAndAlertsTest {

    private static final Path OBSERVABILITY = Path.of("src/main/observability");
    private static final Pattern IDENTIFIER = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Pattern SELECTOR = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)\\s*\\{([^}]*)}");
    private static final Pattern MATCHER_NAME = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(?:=~|!~|!=|=)");
    private static final Pattern GROUPING = Pattern.compile("\\b(?:by|without)\\s*\\(([^)]*)\\)");
    private static final Pattern EXPOSED_LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"");
    /** Series Prometheus writes for every scrape target, not exposed by payonce. */
    private static final Set<String> SCRAPE_SERIES = Set.of("up");
    /** Labels Prometheus adds to every series of a target. */
    private static final Set<String> TARGET_LABELS = Set.of("instance", "job");
    /** PromQL's own words: functions, aggregations and their modifiers. */
    private static final Set<String> PROMQL = Set.of("sum", "min", "max", "avg", "count", "rate", "irate", "increase",
            "histogram_quantile", "by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless",
            "offset", "bool", "abs", "clamp_min", "clamp_max", "absent");

    @Test
    void everyMetricTheDashboardQueriesIsExposedAfterAPay() throws IOException {
        JsonNode dashboard = new ObjectMapper().readTree(OBSERVABILITY.resolve("grafana-dashboard.json").toFile());
        List<String> expressions = new ArrayList<>();
        dashboard.get("panels").forEach(panel -> panel.get("targets").forEach(target -> expressions.add(target.get("expr").asText())));

        assertTrue(expressions.size() >= 8, "the dashboard has its panels: " + expressions);
        Exposition exposed = Exposition.afterAPayAndItsReplay();
        assertEquals(Set.of(), exposed.missingMetrics(expressions));
        assertEquals(Set.of(), exposed.missingLabels(expressions));
    }

    @Test
    void everyMetricAnAlertWatchesIsExposedAfterAPay() throws IOException {
        JsonNode rules = new ObjectMapper(new YAMLFactory()).readTree(OBSERVABILITY.resolve("prometheus-alerts.yml").toFile());
        List<String> expressions = new ArrayList<>();
        rules.path("groups").forEach(group -> group.path("rules").forEach(rule -> expressions.add(rule.path("expr").asText())));

        assertTrue(expressions.size() >= 8, "the rules have their alerts: " + expressions);
        Exposition exposed = Exposition.afterAPayAndItsReplay();
        assertEquals(Set.of(), exposed.missingMetrics(expressions));
        assertEquals(Set.of(), exposed.missingLabels(expressions));
    }

    @Test
    void theCheckFindsAMetricOrALabelThatIsNotThere() {
        Exposition exposed = Exposition.afterAPayAndItsReplay();

        assertEquals(Set.of("payonce_no_such_metric_total"), exposed.missingMetrics(List.of("sum(rate(payonce_no_such_metric_total[5m]))")));
        assertEquals(Set.of("payonce_requests_total by verdict", "payonce_requests_total{outcom}"), exposed.missingLabels(
                List.of("sum by (verdict) (rate(payonce_requests_total{outcom=\"conflict\"}[5m]))")));
        assertEquals(Set.of("payonce_lock_degraded_total{outcome}"), exposed.missingLabels(List.of(
                "sum(rate(payonce_lock_degraded_total{outcome=\"conflict\"}[5m])) / sum(rate(payonce_requests_total[5m]))")),
                "a label is checked on the metric it selects, not on the expression's other metrics");
        assertEquals(Set.of(), exposed.missingLabels(List.of("sum by (outcome) (rate(payonce_requests_total{operation=\"pay\"}[5m]))")));
    }

    /** The metric names of a PromQL expression: what is left without strings, label matchers, ranges and PromQL's words. */
    static Set<String> metricsIn(String expression) {
        String bare = withoutStrings(expression)
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

    /** The label names each metric of an expression is selected by: metric -> labels in its matchers. */
    static Map<String, Set<String>> selectorLabels(String expression) {
        Map<String, Set<String>> labels = new TreeMap<>();
        Matcher selectors = SELECTOR.matcher(withoutStrings(expression));
        while (selectors.find()) {
            Matcher names = MATCHER_NAME.matcher(selectors.group(2));
            while (names.find()) {
                labels.computeIfAbsent(selectors.group(1), metric -> new TreeSet<>()).add(names.group(1));
            }
        }
        return labels;
    }

    /** The label names an expression aggregates by or without. */
    static Set<String> groupingLabels(String expression) {
        Set<String> labels = new TreeSet<>();
        Matcher groupings = GROUPING.matcher(withoutStrings(expression));
        while (groupings.find()) {
            for (String name : groupings.group(1).split(",")) {
                if (!name.isBlank()) {
                    labels.add(name.trim());
                }
            }
        }
        return labels;
    }

    private static String withoutStrings(String expression) {
        return expression.replaceAll("\"[^\"]*\"", "\"\"");
    }

    /** What /q/metrics exposes: each metric's name and the label names its series carry. */
    private record Exposition(Map<String, Set<String>> labelsByMetric) {

        static Exposition afterAPayAndItsReplay() {
            payAndReplay();
            Map<String, Set<String>> labelsByMetric = new HashMap<>();
            Management.metrics().lines()
                    .filter(line -> !line.startsWith("#") && !line.isBlank())
                    .forEach(line -> {
                        String name = line.split("[{ ]", 2)[0];
                        Set<String> labels = labelsByMetric.computeIfAbsent(name, ignored -> new TreeSet<>());
                        int open = line.indexOf('{');
                        if (open >= 0) {
                            Matcher names = EXPOSED_LABEL.matcher(line.substring(open, line.lastIndexOf('}')));
                            while (names.find()) {
                                labels.add(names.group(1));
                            }
                        }
                    });
            assertFalse(labelsByMetric.isEmpty());
            return new Exposition(labelsByMetric);
        }

        /** The metrics the expressions name that are not exposed; the ones Prometheus writes itself are. */
        Set<String> missingMetrics(List<String> expressions) {
            Set<String> missing = new TreeSet<>();
            expressions.forEach(expression -> metricsIn(expression).stream()
                    .filter(metric -> !labelsByMetric.containsKey(metric) && !SCRAPE_SERIES.contains(metric))
                    .forEach(missing::add));
            return missing;
        }

        /**
         * metric{label} for each label a selector matches on that its metric does not carry, and for each
         * label an aggregation groups by that none of the expression's metrics carries (target labels aside).
         */
        Set<String> missingLabels(List<String> expressions) {
            Set<String> missing = new TreeSet<>();
            for (String expression : expressions) {
                selectorLabels(expression).forEach((metric, labels) -> labels.stream()
                        .filter(label -> !carries(metric, label))
                        .forEach(label -> missing.add(metric + "{" + label + "}")));
                Set<String> metrics = metricsIn(expression);
                groupingLabels(expression).stream()
                        .filter(label -> metrics.stream().noneMatch(metric -> carries(metric, label)))
                        .forEach(label -> missing.add(String.join(",", metrics) + " by " + label));
            }
            return missing;
        }

        private boolean carries(String metric, String label) {
            return TARGET_LABELS.contains(label) || labelsByMetric.getOrDefault(metric, Set.of()).contains(label);
        }
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
