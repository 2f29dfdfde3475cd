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
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
    private static final Pattern MATCHERS = Pattern.compile("\\{([^}]*)}");
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
        List<String> expressions = Files.readAllLines(OBSERVABILITY.resolve("prometheus-alerts.yml")).stream()
                .map(String::trim)
                .filter(line -> line.startsWith("expr:"))
                .map(line -> line.substring("expr:".length()).trim())
                .toList();

        assertTrue(expressions.size() >= 8, "the rules have their alerts: " + expressions);
        Exposition exposed = Exposition.afterAPayAndItsReplay();
        assertEquals(Set.of(), exposed.missingMetrics(expressions));
        assertEquals(Set.of(), exposed.missingLabels(expressions));
    }

    @Test
    void theCheckFindsAMetricOrALabelThatIsNotThere() {
        Exposition exposed = Exposition.afterAPayAndItsReplay();

        assertEquals(Set.of("payonce_no_such_metric_total"), exposed.missingMetrics(List.of("sum(rate(payonce_no_such_metric_total[5m]))")));
        assertEquals(Set.of("payonce_requests_total{outcom}", "payonce_requests_total{verdict}"), exposed.missingLabels(
                List.of("sum by (verdict) (rate(payonce_requests_total{outcom=\"conflict\"}[5m]))")));
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

    /** The label names an expression matches on or groups by. */
    static Set<String> labelsIn(String expression) {
        String bare = withoutStrings(expression);
        Set<String> labels = new TreeSet<>();
        Matcher matchers = MATCHERS.matcher(bare);
        while (matchers.find()) {
            Matcher names = MATCHER_NAME.matcher(matchers.group(1));
            while (names.find()) {
                labels.add(names.group(1));
            }
        }
        Matcher groupings = GROUPING.matcher(bare);
        while (groupings.find()) {
            for (String name : groupings.group(1).split(",")) {
                labels.add(name.trim());
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

        /** metric{label} for each label an expression uses that none of its metrics carries (target labels aside). */
        Set<String> missingLabels(List<String> expressions) {
            Set<String> missing = new TreeSet<>();
            for (String expression : expressions) {
                Set<String> metrics = metricsIn(expression);
                Set<String> carried = new TreeSet<>(TARGET_LABELS);
                metrics.forEach(metric -> carried.addAll(labelsByMetric.getOrDefault(metric, Set.of())));
                labelsIn(expression).stream()
                        .filter(label -> !carried.contains(label))
                        .forEach(label -> missing.add(String.join(",", metrics) + "{" + label + "}"));
            }
            return missing;
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
