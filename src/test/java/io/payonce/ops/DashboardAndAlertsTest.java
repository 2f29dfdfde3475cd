package io.payonce.ops;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.payonce.support.Buyer.Checkout;
import io.payonce.support.Buyer;
import io.payonce.support.Management;
import io.quarkus.test.junit.QuarkusTest;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
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
 * The Grafana dashboard and the Prometheus alert rules under src/main/observability, as an operator
 * deploys them. They query only metrics that payonce exposes: after a pay and its replay, every metric
 * an expression names is in /q/metrics, and every label an expression matches on or groups by is
 * carried by one of its metrics (a renamed metric or a typo fails here instead of as an empty panel or
 * a silent alert). They read payonce's job only, so that another application's errors never page
 * payonce's on-call. Every alert keeps namespace and job, says what it means and links its runbook, a
 * page of its own under docs/operations/runbooks; the build's PrometheusRule carries the same rules;
 * the dashboard asks for its data source on import. How each alert fires and stays silent is
 * promtool's test (src/test/observability).
 */
@QuarkusTest
class DashboardAndAlertsTest {

    private static final Path OBSERVABILITY = Path.of("src/main/observability");
    private static final Path PROMETHEUS_RULE = Path.of("target/observability/payonce-prometheus-rule.yml");
    /** A repository file's address on its host: the repository's address, {@code /blob/<ref>/}, then the file's path. */
    private static final Pattern HOSTED_FILE = Pattern.compile("^(.*/blob/[^/]+/)(.+)$");
    private static final Pattern EXPOSED_LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"");
    /** Grafana's label_values(selector, label): the selector is the PromQL. */
    private static final Pattern LABEL_VALUES = Pattern.compile("^label_values\\((.*),\\s*\\w+\\)$");
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.+?)\\s*#*$");
    /** Series Prometheus writes for every scrape target, not exposed by payonce. */
    private static final Set<String> SCRAPE_SERIES = Set.of("up");
    /** Labels Prometheus adds to every series of a target; namespace is the Prometheus Operator's. */
    private static final Set<String> TARGET_LABELS = Set.of("instance", "job", "namespace");
    /** What tells one payonce's alert from another's: staging from production, this Service from a copy. */
    private static final Set<String> ALERT_IDENTITY = Set.of("namespace", "job");

    @Test
    void everyMetricTheDashboardQueriesIsExposedAfterAPay() throws IOException {
        List<String> expressions = dashboardExpressions();

        assertTrue(expressions.size() >= 8, "the dashboard has its panels: " + expressions);
        Exposition exposed = Exposition.afterAPayAndItsReplay();
        assertEquals(Set.of(), exposed.missingMetrics(expressions));
        assertEquals(Set.of(), exposed.missingLabels(expressions));
    }

    @Test
    void everyMetricAnAlertWatchesIsExposedAfterAPay() throws IOException {
        List<String> expressions = alerts().stream().map(alert -> alert.path("expr").asText()).toList();

        assertTrue(expressions.size() >= 8, "the rules have their alerts: " + expressions);
        Exposition exposed = Exposition.afterAPayAndItsReplay();
        assertEquals(Set.of(), exposed.missingMetrics(expressions));
        assertEquals(Set.of(), exposed.missingLabels(expressions));
    }

    @Test
    void everyExpressionReadsPayoncesJobOnly() throws IOException {
        Map<String, List<String>> unscoped = new TreeMap<>();
        for (String expression : allExpressions()) {
            List<String> selectors = PromQl.unscopedSelectors(expression);
            if (!selectors.isEmpty()) {
                unscoped.put(expression, selectors);
            }
        }

        assertEquals(Map.of(), unscoped, "selectors without " + PromQl.JOB_MATCHER + ", by expression");
    }

    @Test
    void everyAlertKeepsNamespaceAndJob() throws IOException {
        Map<String, List<String>> dropping = new TreeMap<>();
        for (JsonNode alert : alerts()) {
            List<String> aggregations = PromQl.aggregationsDropping(alert.path("expr").asText(), ALERT_IDENTITY);
            if (!aggregations.isEmpty()) {
                dropping.put(alert.path("alert").asText(), aggregations);
            }
        }

        assertEquals(Map.of(), dropping, "aggregations that drop namespace or job, by alert");
    }

    @Test
    void everyAlertSaysWhatItMeansAndLinksItsRunbookPage() throws IOException {
        Set<String> runbookFolders = new TreeSet<>();
        Map<String, String> unexplained = new TreeMap<>();
        for (JsonNode alert : alerts()) {
            String name = alert.path("alert").asText();
            JsonNode annotations = alert.path("annotations");
            for (String annotation : List.of("summary", "description", "runbook_url")) {
                if (annotations.path(annotation).asText().isBlank()) {
                    unexplained.put(name + "." + annotation, "missing");
                }
            }
            String runbook = annotations.path("runbook_url").asText();
            if (!runbook.isBlank()) {
                URI url = URI.create(runbook);
                Matcher hosted = HOSTED_FILE.matcher(url.getPath());
                if (!hosted.matches()) {
                    unexplained.put(name + ".runbook_url", "not the address of a file in the repository: " + runbook);
                    continue;
                }
                Path page = Path.of(hosted.group(2));
                runbookFolders.add(url.getScheme() + "://" + url.getAuthority() + hosted.group(1) + page.getParent() + "/");
                String problem = runbookProblem(name, page, url.getFragment());
                if (problem != null) {
                    unexplained.put(name + ".runbook_url", problem);
                }
            }
        }

        assertEquals(Map.of(), unexplained);
        assertEquals(1, runbookFolders.size(), "every runbook is a page of one folder: " + runbookFolders);
        String folder = runbookFolders.iterator().next();
        assertTrue(folder.startsWith("https://") && folder.endsWith("/docs/operations/runbooks/"), folder);
    }

    @Test
    void theRulesShipAsAPrometheusRuleWithTheSameGroups() throws IOException {
        JsonNode resource = yaml(PROMETHEUS_RULE);

        assertEquals("monitoring.coreos.com/v1", resource.path("apiVersion").asText());
        assertEquals("PrometheusRule", resource.path("kind").asText());
        assertEquals("payonce", resource.path("metadata").path("name").asText());
        JsonNode labels = resource.path("metadata").path("labels");
        assertEquals("payonce", labels.path("app.kubernetes.io/name").asText(), labels.toString());
        assertEquals("k8s", labels.path("prometheus").asText(), "kube-prometheus's ruleSelector: " + labels);
        assertEquals("alert-rules", labels.path("role").asText(), "kube-prometheus's ruleSelector: " + labels);
        assertEquals("prometheus-operator", labels.path("payonce.io/needs").asText(), "as the ServiceMonitor: " + labels);
        assertEquals(rules(), resource.path("spec"), "the PrometheusRule's spec is the rules file");
    }

    @Test
    void theDashboardAsksForItsPrometheusOnImport() throws IOException {
        JsonNode dashboard = dashboard();
        JsonNode input = dashboard.path("__inputs").path(0);
        assertEquals("datasource", input.path("type").asText(), "the import dialog's data source input: " + input);
        assertEquals("prometheus", input.path("pluginId").asText(), input.toString());

        JsonNode variable = dashboard.path("templating").path("list").path(0);
        assertEquals("datasource", variable.path("type").asText(), variable.toString());
        assertEquals("${" + input.path("name").asText() + "}", variable.path("current").path("value").asText(),
                "the data source chosen on import is the dashboard's: " + variable);
        List<String> panelSources = new ArrayList<>();
        dashboard.path("panels").forEach(panel -> {
            panelSources.add(panel.path("datasource").path("uid").asText());
            panel.path("targets").forEach(target -> panelSources.add(target.path("datasource").path("uid").asText()));
        });
        assertEquals(Set.of("${" + variable.path("name").asText() + "}"), Set.copyOf(panelSources));
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

    @Test
    void theChecksFindAnUnscopedSelectorAndADroppedLabel() {
        assertEquals(List.of("http_server_requests_seconds_count{status=\"503\"}", "http_server_requests_seconds_count"),
                PromQl.unscopedSelectors("sum by (namespace, job) (rate(http_server_requests_seconds_count{status=\"503\"}[5m]))"
                        + " / sum by (namespace, job) (rate(http_server_requests_seconds_count[5m]))"));
        assertEquals(List.of("up{myjob=\"payonce\"}"), PromQl.unscopedSelectors("max_over_time(up{myjob=\"payonce\"}[1h]) or up{job=\"payonce\"}"));
        assertEquals(List.of(), PromQl.unscopedSelectors(
                "histogram_quantile(0.99, sum by (le) (rate(payonce_operation_seconds_bucket{operation=\"pay\", job=\"payonce\"}[5m]))) > 0.5"));

        assertEquals(List.of("sum(", "max by (instance) ("), PromQl.aggregationsDropping(
                "sum(rate(payonce_requests_total[5m])) / max by (instance) (payonce_redis_reachable)", ALERT_IDENTITY));
        assertEquals(List.of(), PromQl.aggregationsDropping(
                "min by (namespace, job, instance) (payonce_redis_reachable) or max without (pod) (payonce_redis_reachable)", ALERT_IDENTITY));
    }

    private static List<JsonNode> alerts() throws IOException {
        List<JsonNode> alerts = new ArrayList<>();
        rules().path("groups").forEach(group -> group.path("rules").forEach(alerts::add));
        return alerts;
    }

    private static JsonNode rules() throws IOException {
        return yaml(OBSERVABILITY.resolve("prometheus-alerts.yml"));
    }

    private static JsonNode dashboard() throws IOException {
        return new ObjectMapper().readTree(OBSERVABILITY.resolve("grafana-dashboard.json").toFile());
    }

    private static List<String> dashboardExpressions() throws IOException {
        List<String> expressions = new ArrayList<>();
        dashboard().path("panels").forEach(panel -> panel.path("targets").forEach(target -> expressions.add(target.path("expr").asText())));
        return expressions;
    }

    /** The expressions of the dashboard's panels and variables and of the alerts. */
    private static List<String> allExpressions() throws IOException {
        List<String> expressions = new ArrayList<>(dashboardExpressions());
        dashboard().path("templating").path("list").forEach(variable -> {
            if ("query".equals(variable.path("type").asText())) {
                expressions.add(LABEL_VALUES.matcher(variable.path("definition").asText()).replaceFirst("$1"));
            }
        });
        alerts().forEach(alert -> expressions.add(alert.path("expr").asText()));
        return expressions;
    }

    private static JsonNode yaml(Path file) throws IOException {
        return new ObjectMapper(new YAMLFactory()).readTree(file.toFile());
    }

    /** Why {@code page} is not the runbook of {@code alert}: missing, titled otherwise, or without the heading {@code fragment} names. */
    private static String runbookProblem(String alert, Path page, String fragment) throws IOException {
        if (!Files.isRegularFile(page)) {
            return "no page " + page + " in the repository";
        }
        List<String> headings = headings(page);
        if (headings.isEmpty() || !headings.get(0).equals(alert)) {
            return page + " is titled " + (headings.isEmpty() ? "nothing" : headings.get(0)) + ", not " + alert;
        }
        if (fragment != null && !anchors(headings).contains(fragment)) {
            return "no heading of " + page + " for #" + fragment;
        }
        return null;
    }

    /** A page's headings, in order, outside code blocks. */
    private static List<String> headings(Path page) throws IOException {
        List<String> headings = new ArrayList<>();
        boolean inCode = false;
        for (String line : Files.readAllLines(page)) {
            if (line.strip().startsWith("```")) {
                inCode = !inCode;
            }
            Matcher heading = HEADING.matcher(line);
            if (!inCode && heading.matches()) {
                headings.add(heading.group(1));
            }
        }
        return headings;
    }

    /** Headings as the anchors GitHub gives them: lower case, punctuation dropped, spaces as hyphens. */
    private static Set<String> anchors(List<String> headings) {
        Set<String> anchors = new TreeSet<>();
        for (String heading : headings) {
            anchors.add(heading.toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-'));
        }
        return anchors;
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
            expressions.forEach(expression -> PromQl.metricsIn(expression).stream()
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
                PromQl.selectorLabels(expression).forEach((metric, labels) -> labels.stream()
                        .filter(label -> !carries(metric, label))
                        .forEach(label -> missing.add(metric + "{" + label + "}")));
                Set<String> metrics = PromQl.metricsIn(expression);
                PromQl.groupingLabels(expression).stream()
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
        Checkout checkout = Buyer.named("dash-" + UUID.randomUUID(), 1000).checkout(100);
        assertEquals(201, checkout.pay().statusCode());
        assertEquals("true", checkout.pay().header("Idempotent-Replayed"));
    }
}
